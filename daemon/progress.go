package daemon

import (
	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/progress"
)

// newTracker follows the passes of one connector, with the ETA capped by
// the workspace's configured rate limit.
func (d *Daemon) newTracker() *progress.Tracker {
	return progress.New(progress.Options{Calls: d.ws.Calls, RateLimit: d.cfg.Workspace.RateLimit})
}

// Progress returns the connector's running pass's progress; false when
// none runs.
func (c *Connector) Progress() (progress.Snapshot, bool) { return c.tracker.Snapshot() }

// addProgress marks the connectors whose pass this process runs as
// running, with their progress.
func (d *Daemon) addProgress(st *admin.Status) {
	for i := range st.Connectors {
		c, ok := d.Connector(st.Connectors[i].Name)
		if !ok {
			continue
		}
		if p, ok := c.Progress(); ok {
			st.Connectors[i].Running = true
			st.Connectors[i].Progress = &p
		}
	}
}

// Tracker returns the tracker of the connector's passes.
func (c *Connector) Tracker() *progress.Tracker { return c.tracker }
