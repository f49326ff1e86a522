package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/syncd-io/syncd/activity"
	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/mapping"
)

func init() {
	registerCommand("validate", "check a configuration file and summarise it", func(m *Main) Command { return &ValidateCommand{m: m} })
}

// ValidateCommand checks a configuration: it prints a summary and exits 0,
// or prints every problem and exits 1. Unless --offline is given, it also
// makes the checks run makes at start-up (validate_run.go: the state file,
// the API key, the mapped custom fields against the workspace's) and
// opens each connector whose source can list its fields (a CSV header,
// a table's columns, HubSpot's properties) and reports mapped fields the
// source does not have; what it cannot reach is a note, not a problem.
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
	fs := c.m.newFlagSet("validate", "validate --config FILE [--offline]")
	conf := c.m.configFlag(fs)
	offline := fs.Bool("offline", false, "check the file only: do not open the state file, the workspace and the sources")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q: %w", fs.Args(), ErrUsage)
	}
	cfg, err := conf.load()
	var ve *config.ValidationError
	if errors.As(err, &ve) {
		fmt.Fprintf(c.m.Stderr, "%s: %d problem(s):\n", conf.path, len(ve.Problems))
		for _, p := range ve.Problems {
			fmt.Fprintf(c.m.Stderr, "  %s\n", p)
		}
		return &InvalidConfigError{Path: conf.path, Problems: len(ve.Problems)}
	}
	if err != nil {
		return err
	}
	if !*offline {
		problems := c.checkState(cfg)
		problems = append(problems, c.checkWorkspace(ctx, cfg)...)
		problems = append(problems, c.checkSourceFields(ctx, cfg)...)
		c.checkReplication(ctx, cfg, conf.path)
		if len(problems) > 0 {
			fmt.Fprintf(c.m.Stderr, "%s: %d problem(s):\n", conf.path, len(problems))
			for _, p := range problems {
				fmt.Fprintf(c.m.Stderr, "  %s\n", p)
			}
			return &InvalidConfigError{Path: conf.path, Problems: len(problems)}
		}
	}
	fmt.Fprintf(c.m.Stdout, "%s is valid.\n", conf.path)
	fmt.Fprint(c.m.Stdout, cfg.Redacted())
	return nil
}

// checkSourceFields opens each connector that can list its fields and
// returns a problem for every mapped field its records lack. For sources
// whose fields have names apart from their keys (CRM custom fields), it
// prints each name next to its key.
func (c *ValidateCommand) checkSourceFields(ctx context.Context, cfg *config.Config) []string {
	var problems []string
	for _, cc := range cfg.Connectors {
		t, ok := connector.Lookup(cc.Type)
		if !ok {
			continue
		}
		m, err := mapping.Compile(cc.Mapping, cc.Direction, nil)
		if err != nil {
			continue // reported by Validate already
		}
		facts, err := sourceFields(ctx, t, cc, m, func(note string) {
			if note == webhookNote(cc.Name) && cfg.Webhooks.Listen == "" {
				note = "settings.webhooks is set but webhooks.listen is not: the change webhooks cannot arrive (the connector polls on its schedule); set webhooks.listen"
			}
			fmt.Fprintf(c.m.Stderr, "note: connectors[%s]: %s\n", cc.Name, note)
		})
		problems = append(problems, facts.activity...)
		if errors.Is(err, connector.ErrSchema) {
			problems = append(problems, fmt.Sprintf("connectors[%s].settings: %v", cc.Name, err))
			continue
		}
		if err != nil {
			fmt.Fprintf(c.m.Stderr, "note: connectors[%s]: mapped fields not checked against the source: %v\n", cc.Name, err)
			continue
		}
		problems = append(problems, idColumnProblems(cc, m, facts.id)...)
		have, names, writable := facts.have, facts.names, facts.writable
		if have == nil {
			continue
		}
		c.printFieldNames(cc.Name, names, m)
		known := make(map[string]bool, len(have))
		listed := make([]string, 0, len(have))
		for _, f := range have {
			known[f] = true
			if n := names[f]; n != "" {
				f += " (" + n + ")"
			}
			listed = append(listed, f)
		}
		for _, fsrc := range m.FieldSources() {
			if !known[fsrc.Field] {
				problems = append(problems, fmt.Sprintf("connectors[%s].mapping.%s: unknown source field %q; the source has: %s",
					cc.Name, fsrc.Path, fsrc.Field, strings.Join(listed, ", ")))
			}
		}
		problems = append(problems, readOnlyProblems(cc.Name, m, known, writable)...)
	}
	return problems
}

// readOnlyProblems reports the fields that flow back into a record field
// the source keeps read-only (writable nil: the source does not tell).
func readOnlyProblems(name string, m *mapping.Mapper, known map[string]bool, writable []string) []string {
	if writable == nil {
		return nil
	}
	canWrite := make(map[string]bool, len(writable))
	for _, f := range writable {
		canWrite[f] = true
	}
	back := map[string]bool{}
	for _, k := range m.ReverseTargets() {
		back["fields."+k] = true
	}
	var problems []string
	for _, fsrc := range m.FieldSources() {
		if back[fsrc.Path] && known[fsrc.Field] && !canWrite[fsrc.Field] {
			problems = append(problems, fmt.Sprintf("connectors[%s].mapping.%s: source field %q cannot be written, and this field flows back; set direction: to-workspace on it, or map a writable field",
				name, fsrc.Path, fsrc.Field))
		}
	}
	return problems
}

// printFieldNames lists the source's named fields (custom fields by key),
// with the mapping paths that use each.
func (c *ValidateCommand) printFieldNames(name string, names map[string]string, m *mapping.Mapper) {
	if len(names) == 0 {
		return
	}
	used := map[string][]string{}
	for _, fs := range m.FieldSources() {
		used[fs.Field] = append(used[fs.Field], fs.Path)
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(c.m.Stdout, "connectors[%s]: the source's named fields (key: name):\n", name)
	for _, k := range keys {
		line := fmt.Sprintf("  %s: %s", k, names[k])
		if paths := used[k]; len(paths) > 0 {
			line += " <- mapping." + strings.Join(paths, ", mapping.")
		}
		fmt.Fprintln(c.m.Stdout, line)
	}
}

// modeNoter is a source that says why it reads changes otherwise than
// asked (a PostgreSQL connector set to changes: auto that polls) or how
// it reads what the settings leave open (MySQL DATETIME columns' zone).
type modeNoter interface{ ModeNote() string }

// sourceFacts are what a source says of its fields: their names, their
// names where the source has them, those a write may set where it tells
// (nil when the source cannot list them), and its id column where it is
// a table's.
type sourceFacts struct {
	have     []string
	names    map[string]string
	writable []string
	id       *sqlkit.IDColumn
	// activity are the activities.log entries the source cannot log.
	activity []string
}

// sourceFields opens the connector's source for a moment and lists its
// fields (sourceFacts). The source's mode note, if any, goes to note.
func sourceFields(ctx context.Context, t connector.Type, cc config.ConnectorConfig, m *mapping.Mapper, note func(string)) (f sourceFacts, err error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	src, err := t.Open(ctx, connector.Options{Name: cc.Name, Settings: cc.Settings, Fields: m.SourceFields(), ActivityTable: cc.Activities.TableSpec()})
	if err != nil {
		return f, err
	}
	defer src.Close()
	if mn, ok := src.(modeNoter); ok && mn.ModeNote() != "" {
		note(mn.ModeNote())
	}
	if ws, ok := src.(connector.WebhookSource); ok && ws.Webhook() != nil {
		note(webhookNote(cc.Name))
	}
	if aw, ok := src.(connector.ActivityWriter); ok && cc.Activities.Enabled() {
		note(activityNote(aw, cc))
		f.activity = activity.KindProblems(cc.Name, aw, cc.Activities.Log)
		if ac, ok := src.(activityTableChecker); ok {
			if err := ac.CheckActivities(ctx); err != nil {
				return f, err
			}
		}
	}
	if ic, ok := src.(idColumnChecker); ok {
		if f.id, err = ic.IDColumnCheck(ctx); err != nil {
			return f, err
		}
	}
	fl, ok := src.(connector.FieldLister)
	if !ok {
		return f, nil
	}
	if f.have, err = fl.Fields(ctx); err != nil {
		return f, err
	}
	if fd, ok := src.(connector.FieldDescriber); ok {
		if f.names, err = fd.FieldNames(ctx); err != nil {
			return f, err
		}
	}
	if wl, ok := src.(connector.WritableFieldLister); ok {
		if f.writable, err = wl.WritableFields(ctx); err != nil {
			return f, err
		}
	}
	return f, nil
}

// activityTableChecker is a database connector that checks its
// activities table (activities.table and activities.mapping) against the
// database.
type activityTableChecker interface {
	CheckActivities(ctx context.Context) error
}

// activityNote says what the connector logs of the workspace's calls
// and texts, and what its type could log besides.
func activityNote(aw connector.ActivityWriter, cc config.ConnectorConfig) string {
	kinds := make([]string, 0, 2)
	for _, k := range aw.ActivityKinds() {
		kinds = append(kinds, string(k)+"s")
	}
	logs := make([]string, len(cc.Activities.Log))
	for i, l := range cc.Activities.Log {
		logs[i] = string(l)
	}
	return fmt.Sprintf("activities: logs %s on the linked records (this type can log %s; summaries, transcripts and recordings go into a call's activity); "+
		"the events arrive on webhooks.listen, and numbers are found through the mapped phoneNumbers.* fields",
		strings.Join(logs, ", "), strings.Join(kinds, " and "))
}

// webhookNote says where a connector's change webhooks arrive.
func webhookNote(name string) string {
	return "change webhooks are taken at " + connector.WebhookPath(name) + " on webhooks.listen; a verified one starts a pass"
}
