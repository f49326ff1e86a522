package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/syncd-io/syncd/config"
)

func init() {
	registerCommand("validate", "check a configuration file and summarise it", func(m *Main) Command { return &ValidateCommand{m: m} })
}

// ValidateCommand checks a configuration without contacting anything: it
// prints a summary and exits 0, or prints every problem and exits 1.
type ValidateCommand struct{ m *Main }

// InvalidConfigError is returned by validate once it has printed the
// problems; it makes the process exit with status 1.
type InvalidConfigError struct {
	Path     string
	Problems int
}

func (e *InvalidConfigError) Error() string {
	return fmt.Sprintf("%s is not valid: %d problem(s)", e.Path, e.Problems)
}

// ExitCode is 1.
func (e *InvalidConfigError) ExitCode() int { return 1 }

// Run validates the file named by --config.
func (c *ValidateCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("validate", "validate --config FILE")
	path := fs.String("config", "syncd.yaml", "configuration `file`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q: %w", fs.Args(), ErrUsage)
	}
	cfg, err := config.Load(*path, c.m.Getenv)
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		fmt.Fprintf(c.m.Stderr, "%s: %d problem(s):\n", *path, len(ve.Problems))
		for _, p := range ve.Problems {
			fmt.Fprintf(c.m.Stderr, "  %s\n", p)
		}
		return &InvalidConfigError{Path: *path, Problems: len(ve.Problems)}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.m.Stdout, "%s is valid.\n", *path)
	fmt.Fprint(c.m.Stdout, cfg.Redacted())
	return nil
}
