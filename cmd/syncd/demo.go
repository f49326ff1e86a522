package main

import (
	"context"
	"os"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/demo"
)

func init() {
	registerCommand("demo", "sync a sample CSV into an in-process workspace emulator and show what happened", func(m *Main) Command { return &DemoCommand{m: m} })
}

// DemoCommand runs syncd end to end on the embedded default: an emulated
// workspace, a sample CSV export and a generated configuration (package
// demo holds the scenarios).
type DemoCommand struct {
	m *Main
}

// Run parses the flags and runs the demo.
func (c *DemoCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("demo", "demo [--crm csv|hubspot|salesforce|pipedrive|mysql] [--dir DIR] [--rows N] [--serve]")
	crm := fs.String("crm", "csv", "the other system: csv (a CRM export, one way), hubspot, salesforce or pipedrive (that CRM's test server, both ways), or mysql (a table in $SYNCD_DEMO_MYSQL_DSN's database, default root@tcp(127.0.0.1:3306)/test, both ways)")
	dir := fs.String("dir", "", "folder for the sample files (default: a new temporary folder)")
	rows := fs.Int("rows", 25, "rows in the sample CSV")
	serve := fs.Bool("serve", false, "keep the emulator and the daemon running after the demo, until interrupted")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "syncd-demo-")
		if err != nil {
			return err
		}
		*dir = d
	}
	log := newLogger(c.m, config.LogConfig{Level: "warn"})
	return demo.Run(ctx, *crm, demo.Options{
		Out: c.m.Stdout, Getenv: c.m.Getenv, Log: log, Dir: *dir, Rows: *rows, Serve: *serve,
		Watch: func(ctx context.Context, d *daemon.Daemon) func() {
			return newPassWatcher(c.m.Stderr, log, d.Connectors()).start(ctx)
		},
	})
}
