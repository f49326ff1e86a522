package main

import (
	"context"
	"fmt"
	"time"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
)

// checkReplication warns of the replication slots (and publications) of
// syncd's that no configured connector uses, on the databases of the
// configured postgres connectors: a connector removed or renamed leaves
// its slot holding WAL until the server's disk fills. A warning, not a
// problem: the configuration itself is fine, and another syncd sharing
// the database may use them.
func (c *ValidateCommand) checkReplication(ctx context.Context, cfg *config.Config, configPath string) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	orphans, err := daemon.ReplicationOrphans(ctx, cfg, configPath)
	if err != nil {
		fmt.Fprintf(c.m.Stderr, "note: orphaned replication slots not checked everywhere: %v\n", err)
	}
	for _, o := range orphans {
		fmt.Fprintf(c.m.Stderr, "warning: %s (a removed or renamed connector's?): drop it with %s, unless another syncd uses it\n", o, o.Drop)
	}
}
