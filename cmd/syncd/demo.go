package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/syncd-io/syncd/config"
	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

func init() {
	registerCommand("demo", "sync a sample CSV into an in-process workspace emulator and show what happened", func(m *Main) Command { return &DemoCommand{m: m} })
}

// DemoCommand runs syncd end to end on the embedded default: an emulated
// workspace, a sample CSV export and a generated configuration.
type DemoCommand struct {
	m *Main
}

const demoAPIKey = "demo-key"

// Run parses the flags and runs the demo.
func (c *DemoCommand) Run(ctx context.Context, args []string) error {
	fs := c.m.newFlagSet("demo", "demo [--crm csv|hubspot|salesforce|pipedrive] [--dir DIR] [--rows N] [--serve]")
	crm := fs.String("crm", "csv", "the other system: csv (a CRM export, one way), or hubspot, salesforce or pipedrive (that CRM's test server, both ways)")
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
	out := c.m.Stdout
	switch *crm {
	case "csv":
	case "hubspot":
		return c.hubspotDemo(ctx, *dir, *rows, *serve)
	case "pipedrive":
		return c.pipedriveDemo(ctx, *dir, *rows, *serve)
	case "salesforce":
		return c.salesforceDemo(ctx, *dir, *rows, *serve)
	default:
		return fmt.Errorf("--crm %q: use csv, hubspot, salesforce or pipedrive", *crm)
	}

	emu, err := startDemoEmulator()
	if err != nil {
		return err
	}
	defer emu.Close()
	fmt.Fprintf(out, "1. Started a workspace emulator at %s (API key %q)\n", emu.URL, demoAPIKey)

	csvPath := filepath.Join(*dir, "contacts.csv")
	people := demoPeople(*rows)
	if err := writeDemoCSV(csvPath, people); err != nil {
		return err
	}
	cfgPath := filepath.Join(*dir, "syncd.yaml")
	if err := os.WriteFile(cfgPath, []byte(demoConfig(emu.URL, *dir, csvPath)), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(out, "2. Wrote a sample CRM export (%d rows) to %s\n   and a configuration to %s\n", len(people), csvPath, cfgPath)

	cfg, err := config.Load(cfgPath, c.m.Getenv)
	if err != nil {
		return err
	}
	log := newLogger(c.m, config.LogConfig{Level: "warn"})
	d, err := daemon.New(ctx, cfg, daemon.Options{Log: log})
	if err != nil {
		return err
	}
	defer d.Close()
	adminRun, err := d.Start(ctx, daemon.AdminPart)
	if err != nil {
		return err
	}
	defer func() { adminRun.Stop(); _ = adminRun.Wait() }()
	addr := adminRun.AdminAddr
	printHealthPage(out, addr)

	step := func(n int, what string) error {
		before := emu.Stats()
		stopWatch := newPassWatcher(c.m.Stderr, log, d.Connectors()).start(ctx)
		sums, err := d.RunOnce(ctx)
		stopWatch()
		if err != nil {
			return err
		}
		after := emu.Stats()
		delta := func(k string) int { return after.Requests[k] - before.Requests[k] }
		fmt.Fprintf(out, "%d. %s\n   %s\n   calls the emulator saw: %d POST, %d PATCH, %d DELETE, %d list (%d of them throttled with a 429 and retried)\n", n, what, sums[0],
			delta("POST /v1/contacts"), delta("PATCH /v1/contacts/{id}"), delta("DELETE /v1/contacts/{id}"), delta("GET /v1/contacts"), after.Throttled-before.Throttled)
		return nil
	}
	if err := step(3, "First sync: every row becomes a contact (source custom-crm, externalId = the row's id)"); err != nil {
		return err
	}
	if err := step(4, "Second sync, nothing changed: no write at all"); err != nil {
		return err
	}
	people[2][2] = "Lovelace-King"
	people[4][4] = "+44 20 7946 0999"
	people = append(people[:len(people)-1:len(people)-1], []string{fmt.Sprint(len(people) + 1), "Grace", "Hopper", "grace@example.com", "+1 212 555 0100", "Navy"})
	if err := writeDemoCSV(csvPath, people); err != nil {
		return err
	}
	if err := step(5, "The CRM changed two rows, dropped one and added one: two PATCHes, one DELETE, one POST"); err != nil {
		return err
	}
	fmt.Fprintf(out, "6. Look around:\n   curl -s %s/_emulator/contacts   # the workspace's contacts\n   curl -s %s/_emulator/stats      # every call syncd made\n   the state file: %s\n",
		emu.URL, emu.URL, cfg.State.Path)
	if !*serve {
		fmt.Fprintf(out, "   (run 'syncd demo --serve' to keep it running)\n")
		return nil
	}
	fmt.Fprintf(out, "7. Serving until interrupted: edit %s and watch the next pass (every 10s)\n   on the health page: http://%s/\n", csvPath, addr)
	return serveForward(ctx, d)
}

// printHealthPage tells where a demo serves the health page.
func printHealthPage(out io.Writer, addr string) {
	fmt.Fprintf(out, "   The sync health page (progress, charts, failing records): http://%s/ (kept up with --serve)\n", addr)
}

// serveForward runs d's forward schedule (a pass every 10 s in the
// demos' configurations) until ctx ends: a demo's --serve.
func serveForward(ctx context.Context, d *daemon.Daemon) error {
	r, err := d.Start(ctx, daemon.ForwardPart)
	if err != nil {
		return err
	}
	return r.Wait()
}

// demoEmulator is an emulator on a loopback port.
type demoEmulator struct {
	*emulator.Emulator
	URL string
	srv *http.Server
}

func startDemoEmulator() (*demoEmulator, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("demo emulator: %w", err)
	}
	emu := emulator.New(emulator.Options{APIKey: demoAPIKey, Rate: 50, Burst: 10, Seed: 1,
		CustomFields:      []workspace.CustomFieldDefinition{{Name: "Company size", Key: "size", Type: "string"}},
		CustomFieldValues: workspace.ValuesTyped}) // the configuration's default form
	srv := &http.Server{Handler: emu.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &demoEmulator{Emulator: emu, URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

func (e *demoEmulator) Close() {
	_ = e.srv.Close()
	e.Emulator.Close()
}

var demoNames = [][2]string{
	{"Ada", "Lovelace"}, {"Alan", "Turing"}, {"Barbara", "Liskov"}, {"Donald", "Knuth"}, {"Edsger", "Dijkstra"},
	{"Frances", "Allen"}, {"Ken", "Thompson"}, {"Margaret", "Hamilton"}, {"Niklaus", "Wirth"}, {"Radia", "Perlman"},
}

func demoPeople(n int) [][]string {
	rows := make([][]string, 0, n)
	for i := 1; i <= n; i++ {
		name := demoNames[(i-1)%len(demoNames)]
		rows = append(rows, []string{
			fmt.Sprint(i), name[0], name[1],
			fmt.Sprintf("%s.%s%d@example.com", name[0], name[1], i),
			fmt.Sprintf("(415) 555-%04d", 1000+i),
			[]string{"Analytical Engines", "Bletchley", "CLU Inc", "TeX Ltd"}[i%4],
		})
	}
	return rows
}

func writeDemoCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"id", "first_name", "last_name", "email", "phone", "company"})
	_ = w.WriteAll(rows)
	if err := f.Close(); err != nil {
		return err
	}
	return w.Error()
}

func demoConfig(baseURL, dir, csvPath string) string {
	return fmt.Sprintf(`# Generated by syncd demo.
workspace:
  baseURL: %s
  apiKey: %s
  rateLimit: 50
  burst: 10
state:
  path: %s
admin:
  listen: 127.0.0.1:0 # a free loopback port
log:
  level: warn
connectors:
  - name: crm
    type: csv
    schedule: "@every 10s"
    onSourceDelete: delete
    settings:
      path: %s
    mapping:
      externalId: id
      sourceUrl: "https://crm.example.com/contacts/{{ .id }}"
      fields:
        firstName: first_name
        lastName: last_name
        company: company
        emails.work: { from: email, transform: [email] }
        phoneNumbers.work: { from: phone, transform: [e164], region: US }
`, baseURL, demoAPIKey, filepath.Join(dir, "syncd.db"), csvPath)
}
