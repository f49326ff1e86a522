package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/discover"
)

func init() {
	registerCommand("init", "look at a source and the workspace and write a configuration", func(m *Main) Command { return &InitCommand{m: m} })
}

// apiKeyEnv is the variable init reads the workspace API key from and
// writes into the file as a reference.
const apiKeyEnv = "WORKSPACE_API_KEY"

// InitCommand connects to a source and to the workspace and writes a
// complete configuration: the connector's settings (secrets as ${NAME}
// references), its change cursor, and a mapping guessed from the
// source's field names and sample values, each guess with its reason
// (package discover). With stdin on a terminal, or a prompter given, it
// asks for what is missing and lets the operator confirm or change each
// guess; otherwise it takes the flags only and names what is missing.
type InitCommand struct {
	m *Main
	// prompt, when set, asks the questions (tests); else a terminal on
	// stdin does, and without one init asks nothing.
	prompt Prompter
}

// setFlags collects repeated --set KEY=VALUE.
type setFlags map[string]string

func (s setFlags) String() string { return "" }

func (s setFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q: want KEY=VALUE", v)
	}
	s[strings.TrimSpace(k)] = val
	return nil
}

// MissingInputError names every input a non-interactive init lacks.
type MissingInputError struct{ Missing []string }

func (e *MissingInputError) Error() string {
	return "missing (stdin is not a terminal, so init asks nothing):\n  " + strings.Join(e.Missing, "\n  ")
}

// Run parses the flags and writes the file.
func (c *InitCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("init", "init --type TYPE --set KEY=VALUE ... --base-url URL [--out FILE] [--region XX] [--name NAME] [--force]")
	typ := fs.String("type", "", "connector type: "+strings.Join(connector.Types(), ", "))
	sets := setFlags{}
	fs.Var(sets, "set", "a connector setting, KEY=VALUE (repeat); a secret may be given as ${NAME}")
	baseURL := fs.String("base-url", "", "the workspace API's address")
	out := fs.String("out", "syncd.yaml", "the configuration file to write")
	region := fs.String("region", "", "phone region for numbers without a country code (default: guessed from the samples)")
	name := fs.String("name", "", "the connector's name (default: the type)")
	force := fs.Bool("force", false, "overwrite an existing file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q: %w", fs.Args(), ErrUsage)
	}
	if _, err := os.Stat(*out); err == nil && !*force {
		return fmt.Errorf("%s exists: init never overwrites a file; pass --force to replace it, or --out to write another", *out)
	}
	p := c.prompt
	if p == nil {
		p = terminalPrompter(c.m)
	}
	in := &initInput{typ: *typ, sets: sets, baseURL: *baseURL, apiKey: c.m.Getenv(apiKeyEnv), region: strings.ToUpper(*region)}
	if err := in.complete(p); err != nil {
		return err
	}
	src, err := c.inspect(ctx, in, p)
	if err != nil {
		return err
	}
	defs, err := discover.Workspace(ctx, in.baseURL, in.apiKey)
	if err != nil {
		return err
	}
	prop := discover.Propose(src, defs, in.region)
	if p != nil {
		if prop, err = review(p, src, prop); err != nil {
			return err
		}
	}
	f := &discover.File{
		Connector: cmpOr(*name, src.Type),
		BaseURL:   in.baseURL,
		APIKeyEnv: apiKeyEnv,
		StatePath: statePathBeside(*out),
		Source:    src,
		Proposal:  prop,
		Head: fmt.Sprintf("Written by `syncd init --type %s` on %s. Check it with\n`syncd validate --config %s`, then run `syncd run --once --config %s`.",
			src.Type, time.Now().UTC().Format("2006-01-02"), *out, *out),
	}
	data, err := f.YAML()
	if err != nil {
		return err
	}
	if err := writeNew(*out, data, *force); err != nil {
		return err
	}
	c.report(*out, src, prop, in)
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// initInput is what init needs before it can look at anything.
type initInput struct {
	typ     string
	sets    map[string]string
	baseURL string
	apiKey  string
	region  string
}

// complete asks for what is missing, or, without a prompter, fails
// naming all of it.
func (in *initInput) complete(p Prompter) error {
	var missing []string
	if in.typ == "" {
		if p == nil {
			missing = append(missing, "--type: the connector type, one of "+strings.Join(connector.Types(), ", "))
		} else {
			v, err := p.Ask("Connector type ("+strings.Join(connector.Types(), ", ")+")", "")
			if err != nil {
				return err
			}
			in.typ = strings.TrimSpace(v)
		}
	}
	if t, ok := connector.Lookup(in.typ); ok {
		secrets := discover.SecretKeys(t)
		for _, m := range discover.Missing(in.typ, in.sets) {
			key, _, _ := strings.Cut(m, ":")
			if p == nil {
				missing = append(missing, fmt.Sprintf("--set %s=...: %s", key, m))
				continue
			}
			if err := askSetting(p, in, key, secrets[key]); err != nil {
				return err
			}
		}
		// A setting may be required only with another (Salesforce's
		// secret or key): ask again until nothing is missing.
		for i := 0; p != nil && i < 3; i++ {
			ms := discover.Missing(in.typ, in.sets)
			if len(ms) == 0 {
				break
			}
			key, _, _ := strings.Cut(ms[0], ":")
			if err := askSetting(p, in, key, secrets[key]); err != nil {
				return err
			}
		}
	} else if in.typ != "" {
		return fmt.Errorf("--type %q: want one of %s", in.typ, strings.Join(connector.Types(), ", "))
	}
	if in.baseURL == "" {
		if p == nil {
			missing = append(missing, "--base-url: the workspace API's address")
		} else {
			v, err := p.Ask("Workspace API address", "")
			if err != nil {
				return err
			}
			in.baseURL = strings.TrimSpace(v)
		}
	}
	if in.apiKey == "" {
		if p == nil {
			missing = append(missing, apiKeyEnv+": the workspace API key, in the environment (export "+apiKeyEnv+"=...), never a flag")
		} else {
			v, err := p.Secret("Workspace API key (not echoed)")
			if err != nil {
				return err
			}
			in.apiKey = strings.TrimSpace(v)
		}
	}
	if len(missing) > 0 {
		return &MissingInputError{Missing: missing}
	}
	return nil
}

func askSetting(p Prompter, in *initInput, key string, secret bool) error {
	q := fmt.Sprintf("%s setting %q", in.typ, key)
	var v string
	var err error
	if secret {
		v, err = p.Secret(q + " (a secret, not echoed)")
	} else {
		v, err = p.Ask(q, "")
	}
	if err != nil {
		return err
	}
	if v = strings.TrimSpace(v); v == "" {
		return fmt.Errorf("%s: required", key)
	}
	in.sets[key] = v
	return nil
}

// inspect runs discovery; with a prompter, a setting discovery could not
// find (an id column, a change cursor) is asked for and tried again.
func (c *InitCommand) inspect(ctx context.Context, in *initInput, p Prompter) (*discover.Source, error) {
	for try := 0; ; try++ {
		src, err := discover.Inspect(ctx, discover.Request{Type: in.typ, Set: in.sets, Getenv: c.m.Getenv})
		if err == nil {
			if p == nil || try >= 3 {
				return src, nil
			}
			// Rows keyed by their e-mail or phone: the operator may
			// know an id column init did not recognise.
			if key := derivedKey(src); key != nil {
				ans, err := p.Ask(fmt.Sprintf("No column looks like a row id, so %s (idFrom: %s). Enter keeps that, or name the column holding each row's id (\"idColumn\")",
					strings.TrimPrefix(key.Why, "no id column: "), strings.Join(key.Value.([]string), ", ")), "")
				if err != nil {
					return nil, err
				}
				if ans = strings.TrimSpace(ans); ans == "" {
					return src, nil
				}
				in.sets["idColumn"] = ans
				continue
			}
			return src, nil
		}
		key, _, _ := strings.Cut(err.Error(), ":")
		if p == nil || try >= 3 || (key != "idColumn" && key != "updatedAtColumn") {
			return nil, err
		}
		fmt.Fprintln(c.m.Stderr, err)
		if err := askSetting(p, in, key, false); err != nil {
			return nil, err
		}
	}
}

// derivedKey is the idFrom setting discovery proposed, nil when the
// source has an id column or idFrom was given.
func derivedKey(src *discover.Source) *discover.Setting {
	for i, st := range src.Settings {
		if _, ok := st.Value.([]string); ok && st.Key == "idFrom" {
			return &src.Settings[i]
		}
	}
	return nil
}

// review shows each guess and lets the operator keep it (Enter), drop it
// (n) or name another field; then the phone region.
func review(p Prompter, src *discover.Source, prop discover.Proposal) (discover.Proposal, error) {
	known := map[string]bool{}
	for _, f := range src.Fields {
		known[f.Name] = true
	}
	var kept []discover.Guess
	for _, g := range prop.Guesses {
		for {
			ans, err := p.Ask(fmt.Sprintf("%s <- %s (%s). Enter keeps it, n drops it, or type another field", g.Target, g.From, g.Why), "")
			if err != nil {
				return prop, err
			}
			ans = strings.TrimSpace(ans)
			switch {
			case ans == "" || strings.EqualFold(ans, "y"):
				kept = append(kept, g)
			case strings.EqualFold(ans, "n"):
				prop.Unmapped = append(prop.Unmapped, discover.Unmapped{Field: g.From, Why: "proposed for " + g.Target + ", dropped at init"})
			case known[ans]:
				g.From, g.Why = ans, "chosen at init"
				kept = append(kept, g)
			default:
				names := make([]string, 0, len(known))
				for n := range known {
					names = append(names, n)
				}
				sort.Strings(names)
				p.Note(fmt.Sprintf("no field %q; the source has: %s", ans, strings.Join(names, ", ")))
				continue
			}
			break
		}
	}
	prop.Guesses = kept
	if prop.Region != "" {
		ans, err := p.Ask(fmt.Sprintf("Phone region for numbers without a country code (%s)", prop.RegionWhy), prop.Region)
		if err != nil {
			return prop, err
		}
		if ans = strings.ToUpper(strings.TrimSpace(ans)); ans != "" && ans != prop.Region {
			prop.Region, prop.RegionWhy = ans, "chosen at init"
			for i := range prop.Guesses {
				if prop.Guesses[i].Region != "" {
					prop.Guesses[i].Region = ans
				}
			}
		}
	}
	return prop, nil
}

// statePathBeside puts the state file beside the configuration.
func statePathBeside(out string) string {
	dir := filepath.Dir(out)
	if dir == "." {
		return "./syncd.db"
	}
	return filepath.Join(dir, "syncd.db")
}

// writeNew writes data to path; without force it fails when the file
// appeared meanwhile rather than overwrite it.
func writeNew(path string, data []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists: init never overwrites a file; pass --force to replace it", path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// report tells what was written and the export lines to set.
func (c *InitCommand) report(out string, src *discover.Source, prop discover.Proposal, in *initInput) {
	w := c.m.Stdout
	fmt.Fprintf(w, "Wrote %s: %s connector, %d field(s) mapped, %d left as comments, from %d record(s) read.\n",
		out, src.Type, len(prop.Guesses), len(prop.Unmapped), src.Records)
	if src.Export != "" {
		fmt.Fprintf(w, "Recognised export: %s.\n", src.Export)
	}
	for _, st := range src.Settings {
		if st.Key == "idFrom" {
			fmt.Fprintf(w, "Row ids (idFrom): %s; the comment above idFrom in the file says what that means.\n", strings.TrimPrefix(st.Why, "no id column: "))
		}
	}
	if len(prop.Unmapped) > 0 {
		fmt.Fprintln(w, "Left out:")
		for _, u := range prop.Unmapped {
			fmt.Fprintf(w, "  %s: %s\n", u.Field, u.Why)
		}
	}
	exports := append([]discover.Export{{Name: apiKeyEnv, Value: in.apiKey, Set: c.m.Getenv(apiKeyEnv) == in.apiKey}}, src.Exports...)
	fmt.Fprintln(w, "\nThe file holds no secret; set these where syncd runs:")
	for _, e := range exports {
		if e.Set {
			fmt.Fprintf(w, "  # %s is set in this shell already\n", e.Name)
			continue
		}
		fmt.Fprintf(w, "  export %s=%s\n", e.Name, shellQuote(e.Value))
	}
	fmt.Fprintf(w, "\nThen:\n  syncd validate --config %s\n  syncd run --once --config %s\n", out, out)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
