package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/daemon"
)

func init() {
	registerCommand("replication", "drop the replication slot and publication of a PostgreSQL connector being removed, or an orphaned one by name", func(m *Main) Command { return &ReplicationCommand{m: m} })
}

// ReplicationCommand manages the logical replication of PostgreSQL
// connectors: `syncd replication drop --connector NAME` drops the slot
// (which otherwise keeps holding WAL on the server) and the publication
// syncd created; `--slot NAME` drops a slot (and the publication of the
// same name) that no configured connector uses any more, as syncd
// validate, syncd status and the health page report them.
type ReplicationCommand struct {
	m *Main
}

const replicationUsage = "replication drop --config FILE (--connector NAME | --slot NAME [--dsn DSN])"

// Run parses the flags and drops.
func (c *ReplicationCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "drop" {
		return fmt.Errorf("replication: usage: syncd %s", replicationUsage)
	}
	fs := c.m.newFlagSet("replication drop", replicationUsage)
	conf := c.m.configFlag(fs)
	name := fs.String("connector", "", "the PostgreSQL connector whose slot and publication to drop")
	slot := fs.String("slot", "", "a slot of syncd's no configured connector uses (a removed or renamed connector's): drop it and the publication of the same name")
	dsn := fs.String("dsn", "", "with --slot: the database it is on, when no configured connector uses that database any more (default: the databases of the configured postgres connectors)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if (*name == "") == (*slot == "") {
		return fmt.Errorf("replication drop: give --connector or --slot: %w", ErrUsage)
	}
	if *dsn != "" && *slot == "" {
		return fmt.Errorf("replication drop: --dsn goes with --slot: %w", ErrUsage)
	}
	cfg, err := conf.load()
	if err != nil {
		return err
	}
	if *slot != "" {
		return c.dropSlot(ctx, cfg, *slot, *dsn)
	}
	for _, cc := range cfg.Connectors {
		if cc.Name != *name {
			continue
		}
		st, ok := cc.Settings.(*postgres.Settings)
		if !ok {
			return fmt.Errorf("replication drop: connector %s is of type %s, not postgres", cc.Name, cc.Type)
		}
		dropped, err := postgres.DropReplication(ctx, st, cc.Name)
		if err != nil {
			return fmt.Errorf("replication drop: connector %s: %w", cc.Name, err)
		}
		if len(dropped) == 0 {
			fmt.Fprintf(c.m.Stdout, "connector %s: no slot or publication of syncd's to drop\n", cc.Name)
		}
		for _, d := range dropped {
			fmt.Fprintf(c.m.Stdout, "connector %s: dropped %s\n", cc.Name, d)
		}
		return nil
	}
	return fmt.Errorf("replication drop: --connector: no connector named %q (for the slot of a connector removed from the configuration, use --slot %s)", *name, postgres.DefaultSlot(*name))
}

// dropSlot drops the slot (and publication) named slot that no
// configured connector uses: on the database dsn names, or else on the
// one of the configured postgres connectors' databases that holds it.
func (c *ReplicationCommand) dropSlot(ctx context.Context, cfg *config.Config, slot, dsn string) error {
	conns := daemon.PostgresConnectors(cfg)
	for _, pc := range conns {
		if pc.Uses(slot) {
			return fmt.Errorf("replication drop: --slot %s: connector %s uses it; remove the connector from the configuration first (or use --connector %s)", slot, pc.Name, pc.Name)
		}
	}
	var where []string
	if dsn == "" {
		orphans, err := postgres.FindOrphans(ctx, conns)
		if err != nil {
			fmt.Fprintf(c.m.Stderr, "note: %v\n", err)
		}
		dsns := map[string]string{}
		for _, pc := range conns {
			if db, err := postgres.DatabaseOf(pc.Settings.DSN); err == nil {
				dsns[db] = pc.Settings.DSN
			}
		}
		for _, o := range orphans {
			if o.Name() == slot {
				where = append(where, o.Database)
			}
		}
		switch len(where) {
		case 0:
			var dbs []string
			for db := range dsns {
				dbs = append(dbs, db)
			}
			if len(dbs) == 0 {
				return errors.New("replication drop: --slot: no postgres connector is configured to say which database holds it: give --dsn")
			}
			return fmt.Errorf("replication drop: --slot: no slot or publication %q of syncd's that no connector uses on %s (on another database, give --dsn)", slot, strings.Join(dbs, ", "))
		case 1:
			dsn = dsns[where[0]]
		default:
			return fmt.Errorf("replication drop: --slot: %q is on several databases (%s): give --dsn", slot, strings.Join(where, ", "))
		}
	}
	dropped, err := postgres.DropOrphan(ctx, dsn, slot)
	if err != nil {
		return fmt.Errorf("replication drop: --slot %s: %w", slot, err)
	}
	if len(dropped) == 0 {
		fmt.Fprintf(c.m.Stdout, "%s: no slot or publication of that name to drop\n", slot)
	}
	for _, d := range dropped {
		fmt.Fprintf(c.m.Stdout, "dropped %s\n", d)
	}
	return nil
}
