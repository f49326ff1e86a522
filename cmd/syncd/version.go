package main

import (
	"context"
	"fmt"
	"runtime"
)

func init() {
	registerCommand("version", "print the version", func(m *Main) Command { return &VersionCommand{m: m} })
}

// VersionCommand prints the build version.
type VersionCommand struct{ m *Main }

// Run prints "syncd <version> <go version>".
func (c *VersionCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("version", "version")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Fprintf(c.m.Stdout, "syncd %s %s\n", Version, runtime.Version())
	return nil
}
