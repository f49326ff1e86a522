// Package demo runs syncd end to end against in-process stand-ins: the
// workspace emulator and, for the CRMs, their test servers (HubSpot,
// Pipedrive, Salesforce), each a scenario that prints what happened and
// which calls it cost. `syncd demo` (cmd/syncd) parses the flags and calls
// Run; every scenario shares one way of starting the emulator, the health
// page and the narrative.
package demo

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

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// Scenarios are the demos by the name --crm takes.
var Scenarios = []string{"csv", "hubspot", "salesforce", "pipedrive", "mysql"}

// Options are what a demo takes from the command that runs it.
type Options struct {
	// Out receives the narrative.
	Out io.Writer
	// Getenv reads the environment for the generated configuration.
	Getenv func(string) string
	// Log is the daemon's logger.
	Log *logrus.Logger
	// Watch, when set, follows the passes a scenario runs (a progress
	// bar on a terminal) until the returned stop is called.
	Watch func(ctx context.Context, d *daemon.Daemon) (stop func())
	// Dir holds the sample files, the configuration and the state file.
	Dir string
	// Rows is the number of sample records.
	Rows int
	// Serve keeps the emulator and the daemon running after the
	// scenario, until ctx ends.
	Serve bool
}

// Run runs the scenario named crm (one of Scenarios).
func Run(ctx context.Context, crm string, o Options) error {
	c := &runner{o: o}
	switch crm {
	case "csv":
		return c.csvDemo(ctx, o.Dir, o.Rows, o.Serve)
	case "hubspot":
		return c.hubspotDemo(ctx, o.Dir, o.Rows, o.Serve)
	case "pipedrive":
		return c.pipedriveDemo(ctx, o.Dir, o.Rows, o.Serve)
	case "salesforce":
		return c.salesforceDemo(ctx, o.Dir, o.Rows, o.Serve)
	case "mysql":
		return c.mysqlDemo(ctx, o.Dir, o.Rows, o.Serve)
	}
	return fmt.Errorf("--crm %q: use csv, hubspot, salesforce, pipedrive or mysql", crm)
}

// runner runs one scenario.
type runner struct{ o Options }

// watch starts o.Watch, if any.
func (o Options) watch(ctx context.Context, d *daemon.Daemon) (stop func()) {
	if o.Watch == nil {
		return func() {}
	}
	return o.Watch(ctx, d)
}

// APIKey is the emulator's API key in every scenario.
const APIKey = "demo-key"

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
	emu := emulator.New(emulator.Options{APIKey: APIKey, Rate: 50, Burst: 10, Seed: 1,
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

// SamplePeople returns n rows of sample people, each id, first name,
// last name, e-mail, phone (a US number in national form) and company:
// the demos' records, and the records `syncd emulator --crm` seeds.
func SamplePeople(n int) [][]string {
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
`, baseURL, APIKey, filepath.Join(dir, "syncd.db"), csvPath)
}

// freeAddr returns a free loopback address.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitFor polls ok every 20 ms until it holds or d has passed.
func waitFor(d time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if ok() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ok()
}

// editThreeCompanies does what a person does in the workspace's app:
// sets the company of the first three contacts to "Head of Sales N".
func editThreeCompanies(ctx context.Context, emu *demoEmulator) error {
	contacts := emu.Contacts()
	for i := 0; i < 3 && i < len(contacts); i++ {
		role := workspace.Some(fmt.Sprintf("Head of Sales %d", i+1))
		if _, err := (emulator.App{BaseURL: emu.URL}).UpdateContact(ctx, contacts[i].ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Company: role}}); err != nil {
			return err
		}
	}
	return nil
}
