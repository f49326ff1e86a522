package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/state"
)

func TestConflictsList(t *testing.T) {
	cfg, statePath := webhookConfig(t, "http://127.0.0.1:1", "https://x.example.com/h", "")
	st, err := state.Open(statePath, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []state.Conflict{
		{Connector: "crm", ExternalID: "7", ContactID: "C7", Policy: "newest-wins", Winner: "workspace",
			Workspace: map[string]string{"lastName": "WS", "custom.tags": "a\x1fb"}, Source: map[string]string{"lastName": "CRM"}},
		{Connector: "db", ExternalID: "8", ContactID: "C8", Policy: "crm-wins", Winner: "db",
			Workspace: map[string]string{"company": "W"}, Source: map[string]string{"company": "D"}},
	} {
		if _, err := st.Conflicts.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	// While a daemon holds the file: a clear refusal.
	_, _, err = runMain(t, "conflicts", "list", "--config", cfg)
	if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), "admin.listen is not set") {
		t.Fatalf("list on a held state file: %v", err)
	}
	st.Close()

	out, _, err := runMain(t, "conflicts", "list", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#2", "db externalId=8 contact=C8 policy=crm-wins winner=db", `company: workspace "W", db "D"`,
		"#1", `lastName: workspace "WS", crm "CRM"`, `custom.tags: workspace "a, b", crm ""`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "#2") > strings.Index(out, "#1") {
		t.Error("conflicts not listed newest first")
	}
	out, _, err = runMain(t, "conflicts", "list", "--config", cfg, "--connector", "crm", "--json")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got struct {
		ID        uint64            `json:"id"`
		Winner    string            `json:"winner"`
		Workspace map[string]string `json:"workspace"`
	}
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &got) != nil || got.ID != 1 || got.Winner != "workspace" {
		t.Fatalf("--json --connector crm: %q", out)
	}
	if _, _, err := runMain(t, "conflicts"); !errors.Is(err, ErrUsage) {
		t.Fatalf("no subcommand: %v", err)
	}
}
