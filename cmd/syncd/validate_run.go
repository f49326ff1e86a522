package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// The checks run makes at start-up beyond the file's own, made by
// validate too (unless --offline) so that a configuration validate
// passes is one run starts with: the state file opens, the workspace
// takes the API key, and every mapping compiles against the workspace's
// custom field keys (daemon.CustomFieldKeys and daemon.CompileMapping,
// the code run uses). What cannot be reached is a note, not a problem.

// checkState reports a state file run would refuse (empty, truncated,
// another program's, written by a newer syncd). A missing file is fine
// (run creates it), and so is one a daemon holds or an older schema (run
// migrates it).
func (c *ValidateCommand) checkState(cfg *config.Config) []string {
	path := cfg.State.Path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	st, err := openStateFile(path, readState)
	switch {
	case err == nil:
		_ = st.Close()
		return nil
	case errors.Is(err, state.ErrLocked), errors.Is(err, state.ErrMigrationNeeded):
		return nil
	default:
		return []string{fmt.Sprintf("state.path: %v", err)}
	}
}

// checkWorkspace asks the workspace what run asks it at start-up.
func (c *ValidateCommand) checkWorkspace(ctx context.Context, cfg *config.Config) []string {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	opts := daemon.WorkspaceOptions(cfg, quiet)
	opts.MaxRetries = 1 // an unreachable workspace is a note: say so soon
	ws, err := workspace.NewClient(opts)
	if err != nil {
		return []string{fmt.Sprintf("workspace: %v", err)}
	}
	if err := checkCredentials(ctx, ws); err != nil {
		if workspace.IsUnauthorized(err) {
			return []string{fmt.Sprintf("workspace.apiKey: %v", err)}
		}
		fmt.Fprintf(c.m.Stderr, "note: workspace: not checked (API key, custom fields): %v\n", err)
		return nil
	}
	keys, err := daemon.CustomFieldKeys(ctx, cfg, ws)
	if err != nil {
		fmt.Fprintf(c.m.Stderr, "note: workspace: custom fields not checked: %v\n", err)
		return nil
	}
	if keys == nil {
		return nil
	}
	var problems []string
	for _, cc := range cfg.Connectors {
		_, err := daemon.CompileMapping(cc, keys)
		var se *mapping.SpecError
		if !errors.As(err, &se) {
			continue // none, or reported with the file's problems
		}
		for _, mp := range se.Problems {
			mp.Path = "connectors[" + cc.Name + "].mapping." + mp.Path
			problems = append(problems, mp.String())
		}
	}
	return problems
}
