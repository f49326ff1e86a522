package daemon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/metrics"
)

// orphanCheckEvery is how often a running daemon looks for orphaned
// replication slots (a connector removed or renamed while its slot holds
// WAL on the server).
const orphanCheckEvery = 5 * time.Minute

// orphanWatch keeps what the last look for orphaned replication slots
// found, for the status, the health page and the metrics.
type orphanWatch struct {
	mu     sync.Mutex
	found  []admin.ReplicationOrphan
	looked bool
	warned map[string]bool // orphans logged by this process
}

// PostgresConnectors are cfg's postgres connectors.
func PostgresConnectors(cfg *config.Config) []postgres.Configured {
	var out []postgres.Configured
	for _, cc := range cfg.Connectors {
		if st, ok := cc.Settings.(*postgres.Settings); ok {
			out = append(out, postgres.Configured{Name: cc.Name, Settings: st})
		}
	}
	return out
}

// ReplicationOrphans looks, on the database of each of cfg's postgres
// connectors, for the replication slots and publications of syncd's that
// no configured connector uses (postgres.FindOrphans), each with the
// command that drops it; configPath is the configuration's file, for the
// command. A database it could not read is in the error, the others'
// orphans are returned.
func ReplicationOrphans(ctx context.Context, cfg *config.Config, configPath string) ([]admin.ReplicationOrphan, error) {
	conns := PostgresConnectors(cfg)
	if len(conns) == 0 {
		return nil, nil
	}
	found, err := postgres.FindOrphans(ctx, conns)
	out := make([]admin.ReplicationOrphan, len(found))
	for i, o := range found {
		out[i] = admin.ReplicationOrphan{Database: o.Database, Slot: o.Slot, Publication: o.Publication,
			HeldBytes: o.HeldBytes, Held: o.Held(), Active: o.Active, WALStatus: o.WALStatus,
			Drop: fmt.Sprintf("syncd replication drop --config %s --slot %s", orDefault(configPath), o.Name())}
	}
	return out, err
}

// CheckReplicationOrphans looks for orphaned replication slots now (the
// daemon does every orphanCheckEvery), logs each new one, and returns
// them.
func (d *Daemon) CheckReplicationOrphans(ctx context.Context) ([]admin.ReplicationOrphan, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	found, err := ReplicationOrphans(ctx, d.cfg, d.configPath)
	if err != nil {
		d.log.WithError(err).Warn("could not look for orphaned replication slots")
	}
	w := &d.ops.orphans
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && w.looked {
		// Keep what the databases answered last time rather than hide it.
		return w.found, err
	}
	w.found, w.looked = found, true
	if w.warned == nil {
		w.warned = map[string]bool{}
	}
	for _, o := range found {
		key := o.Database + "/" + o.Slot + "/" + o.Publication
		if w.warned[key] {
			continue
		}
		w.warned[key] = true
		d.log.WithField(logfield.Slot, o.Slot).WithField(logfield.Address, o.Database).WithField(logfield.Bytes, o.HeldBytes).
			WithField(logfield.Action, o.Drop).Warn("a replication slot or publication of syncd's is used by no configured connector; drop it unless another syncd uses it")
	}
	return found, err
}

// replicationOrphans returns what the last look found (nil before any).
func (d *Daemon) replicationOrphans() []admin.ReplicationOrphan {
	w := &d.ops.orphans
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]admin.ReplicationOrphan(nil), w.found...)
}

// startOrphanWatch adds the look for orphaned replication slots, at once
// and every orphanCheckEvery, when a postgres connector is configured,
// and makes the metrics read what it found.
func (d *Daemon) startOrphanWatch(r *Running) {
	if len(PostgresConnectors(d.cfg)) == 0 {
		return
	}
	d.ops.metrics.SetReplicationOrphans(func() []metrics.ReplicationOrphan {
		found := d.replicationOrphans()
		out := make([]metrics.ReplicationOrphan, len(found))
		for i, o := range found {
			out[i] = metrics.ReplicationOrphan{Database: o.Database, Slot: o.Slot, Publication: o.Publication, Bytes: o.HeldBytes}
		}
		return out
	})
	r.add(&service{name: "orphaned replication slots", serve: func(ctx context.Context) error {
		for {
			_, _ = d.CheckReplicationOrphans(ctx)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(orphanCheckEvery):
			}
		}
	}})
}
