package daemon

import (
	"context"
	"sync"
)

// WaitIdle waits until no pass of any connector is in progress, or ctx
// ends (false). Call it after ctx of Serve is cancelled and before Close,
// so that a resync or retry started through the admin API (whose context
// ends with the daemon's) finishes its batch and records it before the
// state file closes.
func (d *Daemon) WaitIdle(ctx context.Context) bool {
	var wg sync.WaitGroup
	for _, c := range d.connectors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.running.Lock()
			//lint:ignore SA2001 only waiting for the pass in progress to end
			c.running.Unlock()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
