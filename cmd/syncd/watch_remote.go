package main

import (
	"context"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/progress"
)

// remoteEvery is how often `syncd resync` asks a running daemon for its
// progress while the daemon resyncs: once a second is a readable bar and
// a light load on the daemon's state file.
const remoteEvery = time.Second

// remotePasses are the passes of a running daemon, read from its
// GET /status.
type remotePasses struct {
	ctx context.Context
	cl  *admin.Client
	st  admin.Status
}

func newRemotePasses(ctx context.Context, cl *admin.Client) *remotePasses {
	return &remotePasses{ctx: ctx, cl: cl}
}

// refresh reads the status; a failed read keeps the last one (the bar
// stands still rather than ending).
func (r *remotePasses) refresh() {
	st, err := r.cl.Status(r.ctx)
	if err != nil {
		return
	}
	r.st = st
}

func (r *remotePasses) names() []string {
	out := make([]string, len(r.st.Connectors))
	for i, c := range r.st.Connectors {
		out[i] = c.Name
	}
	return out
}

func (r *remotePasses) progress(name string) (progress.Snapshot, bool) {
	for _, c := range r.st.Connectors {
		if c.Name == name && c.Progress != nil {
			return *c.Progress, true
		}
	}
	return progress.Snapshot{}, false
}

// final is not known from the status: the bar stays at the last figures
// seen, and the resync's answer gives the summary.
func (r *remotePasses) final(string) (progress.Snapshot, bool) { return progress.Snapshot{}, false }
