// Package all registers every connector type. Import it for its side
// effect where the registry must hold them all: the syncd command, and
// the test that keeps docs/CONNECTORS.md's capability table true. A new
// connector adds its import here.
package all

import (
	"fmt"
	"strings"

	"github.com/syncd-io/syncd/connector"
	_ "github.com/syncd-io/syncd/connector/csv"        // type csv
	_ "github.com/syncd-io/syncd/connector/hubspot"    // type hubspot
	_ "github.com/syncd-io/syncd/connector/mysql"      // type mysql
	_ "github.com/syncd-io/syncd/connector/pipedrive"  // type pipedrive
	_ "github.com/syncd-io/syncd/connector/postgres"   // type postgres
	_ "github.com/syncd-io/syncd/connector/salesforce" // type salesforce
)

// CapabilityTable returns the Markdown table of every registered
// connector type's flags and declared capabilities, as
// docs/CONNECTORS.md shows it.
func CapabilityTable() string {
	var b strings.Builder
	b.WriteString("| type | writable | incremental | soft delete |")
	for _, c := range connector.Capabilities() {
		fmt.Fprintf(&b, " %s (`%s`) |", c, c.Interface())
	}
	b.WriteString("\n|---|---|---|---|")
	b.WriteString(strings.Repeat("---|", len(connector.Capabilities())))
	b.WriteString("\n")
	mark := func(ok bool) string {
		if ok {
			return "yes"
		}
		return ""
	}
	for _, name := range connector.Types() {
		t, _ := connector.Lookup(name)
		fmt.Fprintf(&b, "| %s | %s | %s | %s |", name, mark(t.Writable), mark(t.Incremental), mark(t.SoftDelete))
		for _, c := range connector.Capabilities() {
			fmt.Fprintf(&b, " %s |", mark(t.Has(c)))
		}
		b.WriteString("\n")
	}
	return b.String()
}
