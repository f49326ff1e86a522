package all

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/connector"
)

var update = flag.Bool("update", false, "rewrite docs/CONNECTORS.md's capability table from the registry")

const (
	tableStart = "<!-- capability table: written by `go test ./connector/all -update`; a test fails when it differs from the registry -->\n"
	tableEnd   = "<!-- end of capability table -->"
)

// TestCapabilityTable keeps docs/CONNECTORS.md's table of what each
// connector implements equal to what the connectors declare (and the
// contract suite checks each declaration against the connector itself).
func TestCapabilityTable(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "CONNECTORS.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, tableStart)
	j := strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no capability table between %q and %q", path, strings.TrimSpace(tableStart), tableEnd)
	}
	got, want := doc[i+len(tableStart):j], CapabilityTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:i+len(tableStart)]+want+doc[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's capability table differs from the connectors' declarations; run `go test ./connector/all -update`.\nhave:\n%s\nwant:\n%s", path, got, want)
}

// TestEveryTypeRegistered checks that the registry holds the six
// connector types and that each declares only known capabilities.
func TestEveryTypeRegistered(t *testing.T) {
	want := []string{"csv", "hubspot", "mysql", "pipedrive", "postgres", "salesforce"}
	got := connector.Types()
	for _, w := range want {
		if _, ok := connector.Lookup(w); !ok {
			t.Errorf("type %q is not registered (have %v)", w, got)
		}
	}
	for _, name := range got {
		typ, _ := connector.Lookup(name)
		for _, c := range typ.Capabilities {
			if c.Interface() == "" {
				t.Errorf("type %q declares unknown capability %q", name, c)
			}
		}
	}
}

// TestConnectorSkeleton checks that every connector package has the
// files docs/CONNECTORS.md requires of it, so that the same question is
// answered in the same file of each.
func TestConnectorSkeleton(t *testing.T) {
	for _, name := range connector.Types() {
		typ, _ := connector.Lookup(name)
		dir := filepath.Join("..", name)
		want := []string{name + ".go", "settings.go", "changes.go", "snapshot.go", "FACTS.md", "contract_test.go"}
		if typ.Writable {
			want = append(want, "write.go", "errors.go", "client.go")
		}
		for _, c := range typ.Capabilities {
			if c == connector.CapNotify && typ.Has(connector.CapWebhook) {
				continue // a system's webhooks notify: webhooks.go
			}
			if f := capabilityFile[c]; f != "" {
				want = append(want, f)
			}
		}
		for _, f := range want {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("connector %s has no %s (docs/CONNECTORS.md, The files of a connector)", name, f)
			}
		}
	}
}

// capabilityFile is the file that holds each capability's method.
var capabilityFile = map[connector.Capability]string{
	connector.CapGet:        "get.go",
	connector.CapCount:      "count.go",
	connector.CapNotify:     "watch.go",
	connector.CapWebhook:    "webhooks.go",
	connector.CapActivities: "activities.go",
}
