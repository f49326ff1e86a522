//go:build unix

package state

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockRetry is how often lockShared tries again, as bbolt does.
const lockRetry = 50 * time.Millisecond

// lockShared takes a shared lock on f, the lock bbolt takes for a
// read-only Open, waiting up to timeout for a writer to let go (ErrLocked
// after that): checkFile reads the file's pages under it, so that a
// running daemon's commits never show it a half-written file. Closing f
// releases it.
func lockShared(f *os.File, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrLocked
		}
		time.Sleep(lockRetry)
	}
}
