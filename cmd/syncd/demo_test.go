package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/capture"
)

// The demos are the README's first command: what they print must stay
// true, so the test checks the counts they claim.
func TestDemos(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "csv one way", args: []string{"demo", "--dir", "", "--rows", "25"}, want: []string{
			"created=25 updated=0",
			"4. Second sync, nothing changed: no write at all\n   created=0 updated=0 unchanged=25",
			"created=1 updated=2 unchanged=22 deleted=1",
			"1 POST, 2 PATCH, 1 DELETE",
		}},
		{name: "hubspot both ways", args: []string{"demo", "--dir", "", "--crm", "hubspot", "--rows", "10"}, want: []string{
			"created=10 updated=0",
			"reached HubSpot: true",
			"in 1 batch/update call(s)",
			"recognised as syncd's own writes, 0 PATCH",
			"1 PATCH to the workspace; its webhook came back as an echo and was dropped: 0 HubSpot writes",
		}},
		{name: "pipedrive both ways", args: []string{"demo", "--dir", "", "--crm", "pipedrive", "--rows", "25"}, want: []string{
			"created=25 updated=0",
			"reached Pipedrive: true",
			"in 3 PATCH; every unmapped home address kept: true",
			"recognised as syncd's own writes, 0 PATCH",
			"unchanged=1 deleted=2",
			"0 answered 429",
			"burst requests (2 s window):",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.args[2] = t.TempDir()
			out, _, err := runMain(t, tt.args...)
			if err != nil {
				t.Fatalf("demo: %v\n%s", err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("demo output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// The csv demo serves the health page on a free loopback port and, with
// --serve, keeps it up: the page shows the demo's three passes.
func TestDemoServesTheHealthPage(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb capture.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, []string{"demo", "--dir", t.TempDir(), "--rows", "30", "--serve"}) }()
	url := regexp.MustCompile(`The sync health page \(progress, charts, failing records\): (http://127\.0\.0\.1:\d+/)`)
	var page string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the demo never served its passes' health page:\n%s\n%s", out.String(), errb.String())
		}
		mt := url.FindStringSubmatch(out.String())
		if mt == nil || !strings.Contains(out.String(), "7. Serving until interrupted") {
			continue
		}
		resp, err := http.Get(mt[1])
		if err != nil {
			t.Fatalf("health page: %v", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if page = string(body); resp.StatusCode != http.StatusOK {
			t.Fatalf("health page answered %d", resp.StatusCode)
		}
		break
	}
	// The demo's three passes, and the one serving starts with when it
	// has ended already.
	if n := strings.Count(page, `<g class="pass" id="pass-`); n != 3 && n != 4 {
		t.Errorf("the health page charts %d passes, want the demo's 3 (or 4)", n)
	}
	for _, want := range []string{`id="chart-api-calls"`, `id="chart-problems"`, `<tr id="connector-crm">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the health page lacks %q", want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("demo --serve after interruption: %v", err)
	}
}
