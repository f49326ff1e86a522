package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
)

// opVerb is one operator verb (deadletters list, deletes approve, status):
// its own flags and arguments, the one question it asks the operator that
// reach chose, and its reply. runVerb does what every verb shares: the
// --config and --json flags, the choice of the daemon or the state file,
// and the rendering.
type opVerb struct {
	usage  string
	access access
	// json, when set, adds --json with this help: the reply's values
	// are printed as JSON, one per line, or indented with indent.
	json   string
	indent bool
	// flags adds the verb's own flags to fs; it returns the check of the
	// positional arguments (nil: none are taken), run before the
	// configuration is read.
	flags func(fs *flag.FlagSet) (args func(rest []string) error)
	// reach bends the choice of the operator (backup --admin-url).
	reach func() reachOptions
	// ask asks the one question. A reply returned with an error is
	// printed before the error (a resync's summaries up to a failure).
	ask func(ctx context.Context, op operator) (reply, error)
}

// reply is what a verb prints.
type reply interface {
	// text writes the reply for a person.
	text(w io.Writer)
}

// jsonReply is a reply that --json prints as these values.
type jsonReply interface {
	reply
	values() []any
}

// runVerb runs the verb called name with args.
func (m *Main) runVerb(ctx context.Context, name string, v opVerb, args []string) error {
	fs := m.newFlagSet(name, v.usage)
	conf := m.configFlag(fs)
	var asJSON *bool
	if v.json != "" {
		asJSON = fs.Bool("json", false, v.json)
	}
	var checkArgs func([]string) error
	if v.flags != nil {
		checkArgs = v.flags(fs)
	}
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if checkArgs == nil && len(rest) != 0 {
		fs.Usage()
		return fmt.Errorf("%s takes no arguments: %w", name, ErrUsage)
	}
	if checkArgs != nil {
		if err := checkArgs(rest); err != nil {
			return err
		}
	}
	cfg, err := conf.load()
	if err != nil {
		return err
	}
	var o reachOptions
	if v.reach != nil {
		o = v.reach()
	}
	op, err := m.reach(cfg, conf.path, v.access, o)
	if err != nil {
		return err
	}
	ans, err := v.ask(ctx, op)
	if cerr := op.Close(); err == nil {
		err = cerr
	}
	if ans != nil {
		if asJSON != nil && *asJSON {
			if jerr := printJSON(m.Stdout, ans, v.indent); err == nil {
				err = jerr
			}
		} else {
			ans.text(m.Stdout)
		}
	}
	return err
}

// printJSON prints the reply's values as JSON.
func printJSON(w io.Writer, ans reply, indent bool) error {
	ja, ok := ans.(jsonReply)
	if !ok {
		return fmt.Errorf("this reply has no JSON form")
	}
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent("", "  ")
	}
	for _, v := range ja.values() {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

// runVerbs runs the verb args[0] of a command with several (deadletters
// list|retry|drop); usage is the command's.
func (m *Main) runVerbs(ctx context.Context, command, usage string, verbs map[string]func() opVerb, args []string) error {
	if len(args) == 0 || verbs[args[0]] == nil {
		fmt.Fprintf(m.Stderr, "Usage: syncd %s\n", usage)
		return ErrUsage
	}
	return m.runVerb(ctx, command+" "+args[0], verbs[args[0]](), args[1:])
}

// textFunc is a reply that is only text.
type textFunc func(w io.Writer)

func (f textFunc) text(w io.Writer) { f(w) }

// lines is a reply printed one line per value with --json.
type lines struct {
	vals  []any
	print func(w io.Writer)
}

func (l lines) text(w io.Writer) { l.print(w) }
func (l lines) values() []any    { return l.vals }

// each turns a slice into the values of lines.
func each[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
