package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/demo"
	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// The demos are the README's first command: what they print must stay
// true, so the test checks the counts they claim. Each runs with --serve:
// it serves the health page on a free loopback port and keeps it up, and
// the page shows the demo's passes.
func TestDemos(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		want      []string
		connector string // its row on the health page
		passes    int    // the demo's passes the page charts
		// batched matches the line saying in how many calls the three app
		// edits reached the CRM: the applier gathers a person's edits, so
		// they go out in one call, or two when a loaded machine delivers
		// the webhooks apart; never one call each.
		batched string
		// env, when set, gives the demo its environment (the mysql
		// demo's server, a database of the test's own).
		env func(t *testing.T) map[string]string
	}{
		{name: "csv one way", args: []string{"--rows", "25"}, connector: "crm", passes: 3, want: []string{
			"created=25 updated=0",
			"4. Second sync, nothing changed: no write at all\n   created=0 updated=0 unchanged=25",
			"created=1 updated=2 unchanged=22 deleted=1",
			"1 POST, 2 PATCH, 1 DELETE",
			"7. Serving until interrupted",
		}},
		{name: "hubspot both ways", args: []string{"--crm", "hubspot", "--rows", "10"}, connector: "hubspot", passes: 3, want: []string{
			"created=10 updated=0",
			"reached HubSpot: true",
			"recognised as syncd's own writes, 0 PATCH",
			"1 PATCH to the workspace; its webhook came back as an echo and was dropped: 0 HubSpot writes",
			"on the HubSpot contact's timeline: true",
			"9. Serving until interrupted",
		}, batched: `reached HubSpot: true, after \S+, in [12] batch/update call\(s\)`},
		{name: "pipedrive both ways", args: []string{"--crm", "pipedrive", "--rows", "25"}, connector: "pd", passes: 3, want: []string{
			"created=25 updated=0",
			"reached Pipedrive: true",
			"in 3 PATCH; every unmapped home address kept: true",
			"recognised as syncd's own writes, 0 PATCH",
			"unchanged=1 deleted=2",
			"0 answered 429",
			"burst requests (2 s window):",
			"on the Pipedrive person: true",
			"10. Serving until interrupted",
		}},
		{name: "salesforce both ways", args: []string{"--crm", "salesforce", "--rows", "10"}, connector: "sf", passes: 4, want: []string{
			"created=10 updated=0",
			"1 token call",
			"recognised as its own, 0 PATCH",
			"1 PATCH to the workspace; its webhook came back as an echo and was dropped: 0 Salesforce writes",
			"relinked=1",
			"lastName \"Turing-Merged\"",
			"syncd stops a pass at 50% of them",
			"on the Salesforce Contact's activity timeline: true",
			"11. Serving until interrupted",
		}, batched: `reached Salesforce: true, in [12] sObject Collections update call\(s\)`},
		{name: "mysql both ways", args: []string{"--crm", "mysql", "--rows", "10"}, connector: "shop", passes: 2, want: []string{
			"created=10 updated=0",
			"reached the table (an UPDATE each, ON UPDATE moved updated_at): true",
			"1 create, 1 PATCH, 1 delete in the workspace",
			// unchanged counts the written-back rows the pass reads again
			// that the application did not edit after: 1 or 2.
			"created=1 updated=1 unchanged=",
			"deleted=1 unlinked=0",
			"7. Serving until interrupted",
		}, env: func(t *testing.T) map[string]string {
			_, dsn := mysqltest.NewDatabase(t)
			return map[string]string{demo.MySQLDSNEnv: dsn}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"demo", "--dir", t.TempDir(), "--serve"}, tt.args...)
			var env map[string]string
			if tt.env != nil {
				env = tt.env(t)
			}
			out, page, err := serveDemo(t, args, env)
			if err != nil {
				t.Fatalf("demo --serve after interruption: %v\n%s", err, out)
			}
			wantLines(t, "demo output", out, tt.want...)
			if tt.batched != "" && !regexp.MustCompile(tt.batched).MatchString(out) {
				t.Errorf("demo output lacks %s (the three app edits batched):\n%s", tt.batched, out)
			}
			// The demo's passes, and the one serving starts with when it
			// has ended already.
			if n := strings.Count(page, `<g class="pass" id="pass-`); n < tt.passes || n > tt.passes+1 {
				t.Errorf("the health page charts %d passes, want the demo's %d (or %d)", n, tt.passes, tt.passes+1)
			}
			for _, want := range []string{`id="chart-api-calls"`, `id="chart-problems"`, `<tr id="connector-` + tt.connector + `">`} {
				if !strings.Contains(page, want) {
					t.Errorf("the health page lacks %q", want)
				}
			}
		})
	}
}

// serveDemo runs `syncd demo --serve ...` until it serves, reads the
// health page whose address it printed, then interrupts it: it returns
// what the demo printed, the page, and the demo's error.
func serveDemo(t *testing.T, args []string, env map[string]string) (out, page string, err error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr capture.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, args) }()
	url := regexp.MustCompile(`The sync health page \(progress, charts, failing records\): (http://127\.0\.0\.1:\d+/)`)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-done:
			return stdout.String(), "", fmt.Errorf("the demo ended before serving: %v (stderr: %s)", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo never served its health page:\n%s\n%s", stdout.String(), stderr.String())
		}
		mt := url.FindStringSubmatch(stdout.String())
		if mt == nil || !strings.Contains(stdout.String(), ". Serving until interrupted") {
			continue
		}
		resp, err := http.Get(mt[1])
		if err != nil {
			t.Fatalf("health page: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("health page answered %d", resp.StatusCode)
		}
		page = string(body)
		break
	}
	cancel()
	return stdout.String(), page, <-done
}

// TestDemoWithoutServeSendsNobodyToTheStoppedEmulator: without --serve the
// emulator stops with the demo, so its last step names no address to
// curl, and says how to keep it running.
func TestDemoWithoutServeSendsNobodyToTheStoppedEmulator(t *testing.T) {
	out, serr, err := runMain(t, "demo", "--dir", t.TempDir())
	if err != nil {
		t.Fatalf("demo: %v\n%s%s", err, out, serr)
	}
	_, last, ok := strings.Cut(out, "6. Look around")
	if !ok {
		t.Fatalf("no step 6:\n%s", out)
	}
	if strings.Contains(last, "curl") || strings.Contains(last, "http://127.0.0.1") {
		t.Errorf("step 6 points at the emulator that has stopped:\n%s", last)
	}
	wantLines(t, "demo output", last, "run 'syncd demo --serve' to keep it")
}
