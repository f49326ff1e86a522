package csv_test

import (
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/csv"
)

// TestContract runs the connector contract suite on a CSV file rewritten
// whole on every change, as an export is.
func TestContract(t *testing.T) {
	typ, _ := connector.Lookup(csv.TypeName)
	connectortest.RunSourceSuite(t, connectortest.Harness{
		Type:      typ,
		BatchSize: 3,
		New:       newFileStore,
	})
}
