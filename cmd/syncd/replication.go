package main

import (
	"context"
	"fmt"

	"github.com/syncd-io/syncd/connector/postgres"
)

func init() {
	registerCommand("replication", "drop the replication slot and publication of a PostgreSQL connector being removed", func(m *Main) Command { return &ReplicationCommand{m: m} })
}

// ReplicationCommand manages the logical replication of PostgreSQL
// connectors: `syncd replication drop --connector NAME` drops the slot
// (which otherwise keeps holding WAL on the server) and the publication
// syncd created.
type ReplicationCommand struct {
	m *Main
}

// Run parses the flags and drops.
func (c *ReplicationCommand) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "drop" {
		return fmt.Errorf("replication: usage: syncd replication drop --config FILE --connector NAME")
	}
	fs := c.m.newFlagSet("replication drop", "replication drop --config FILE --connector NAME")
	conf := c.m.configFlag(fs)
	name := fs.String("connector", "", "the PostgreSQL connector whose slot and publication to drop (required)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *name == "" {
		return fmt.Errorf("replication drop: --connector: required")
	}
	cfg, err := conf.load()
	if err != nil {
		return err
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
	return fmt.Errorf("replication drop: --connector: no connector named %q", *name)
}
