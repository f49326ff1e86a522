// Command syncd keeps a business phone workspace's contacts in two-way sync
// with the systems a company already keeps its customers in.
//
// main only builds a Main and calls Run, so that every subcommand can be
// run and tested in-process with its own arguments and output streams.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

// ErrUsage is returned when the command line is wrong; the usage has been
// printed already.
var ErrUsage = errors.New("usage")

func main() {
	ctx, stop := signalContext(context.Background())
	defer stop()
	m := NewMain()
	if err := m.Run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, ErrUsage) && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "syncd:", err)
		}
		var ec exitCoder
		if errors.As(err, &ec) {
			os.Exit(ec.ExitCode())
		}
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(1)
	}
}

// exitCoder is an error that asks for a specific exit status.
type exitCoder interface{ ExitCode() int }

// signalContext returns a context cancelled on the first SIGINT or SIGTERM;
// a second signal exits the process at once (status 1).
func signalContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		var sig os.Signal
		select {
		case sig = <-ch:
			notifySignal(sig, "signal received: finishing the batch in flight, then exiting (send it again to exit at once)")
			cancel()
		case <-ctx.Done():
			return
		}
		sig = <-ch
		notifySignal(sig, "second signal: exiting at once")
		os.Exit(1)
	}()
	return ctx, func() { signal.Stop(ch); cancel() }
}

// signalLogger, when set (by the run command, once its logger exists),
// receives the signal notices, so that they are lines of the configured
// log format; before that they go to standard error as text.
var signalLogger atomic.Pointer[logrus.Logger]

func notifySignal(sig os.Signal, msg string) {
	if log := signalLogger.Load(); log != nil {
		log.WithField(logfield.Signal, sig.String()).Warn(msg)
		return
	}
	fmt.Fprintf(os.Stderr, "syncd: %s: %s\n", sig, msg)
}

// Command is one subcommand.
type Command interface {
	// Run parses args with the command's own flag set and runs it.
	Run(ctx context.Context, args []string) error
}

// Main is the syncd program: its streams and environment, so that tests
// can run any subcommand in-process.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// NewMain returns a Main on the process's streams and environment.
func NewMain() *Main {
	return &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
}

// commands maps each subcommand name to its constructor and one-line help.
// Each subcommand lives in a file of its own.
func (m *Main) commands() map[string]struct {
	New     func() Command
	Summary string
} {
	type entry = struct {
		New     func() Command
		Summary string
	}
	cmds := map[string]entry{}
	for name, c := range registeredCommands {
		c := c
		cmds[name] = entry{New: func() Command { return c.New(m) }, Summary: c.Summary}
	}
	return cmds
}

type commandEntry struct {
	New     func(m *Main) Command
	Summary string
}

// registeredCommands is filled by each subcommand file's init.
var registeredCommands = map[string]commandEntry{}

func registerCommand(name, summary string, newCmd func(m *Main) Command) {
	registeredCommands[name] = commandEntry{New: newCmd, Summary: summary}
}

// Run runs the subcommand named by args[0].
func (m *Main) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		m.usage()
		if len(args) == 0 {
			return ErrUsage
		}
		return nil
	}
	c, ok := m.commands()[args[0]]
	if !ok {
		m.usage()
		return fmt.Errorf("unknown command %q: %w", args[0], ErrUsage)
	}
	return c.New().Run(ctx, args[1:])
}

func (m *Main) usage() {
	var b strings.Builder
	b.WriteString("syncd keeps workspace contacts in two-way sync with your CRM, database or CSV files.\n\nUsage:\n\n\tsyncd <command> [arguments]\n\nCommands:\n\n")
	names := make([]string, 0, len(registeredCommands))
	for n := range registeredCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\t%-12s %s\n", n, registeredCommands[n].Summary)
	}
	b.WriteString("\nRun 'syncd <command> -h' for a command's flags.\n")
	fmt.Fprint(m.Stderr, b.String())
}

// newFlagSet returns a flag set for a subcommand that writes to m.Stderr
// and returns errors instead of exiting.
func (m *Main) newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet("syncd "+name, flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(m.Stderr, "Usage: syncd %s\n\n", usage)
		fs.PrintDefaults()
	}
	return fs
}
