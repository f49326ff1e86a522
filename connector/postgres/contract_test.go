package postgres_test

import (
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/postgres"
)

// TestContract runs the connector contract suite on every table variant:
// ids of several types, hard and soft deletes, a view.
func TestContract(t *testing.T) {
	typ, _ := connector.Lookup(postgres.TypeName)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			connectortest.RunSourceSuite(t, connectortest.Harness{
				Type:          typ,
				BatchSize:     batchSize,
				SameTimestamp: true,
				SoftDelete:    v.soft,
				MissingID:     v.missingID,
				New:           v.newStore,
			})
		})
	}
}
