package mysql_test

import (
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/mysql"
)

// TestContract runs the connector contract suite on every table variant
// against the machine's MariaDB: numeric and text ids, hard and soft
// deletes (a DATETIME(6) and a tinyint(1) mark), a view.
func TestContract(t *testing.T) {
	typ, _ := connector.Lookup(mysql.TypeName)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			connectortest.RunSourceSuite(t, connectortest.Harness{
				Type:          typ,
				BatchSize:     batchSize,
				SameTimestamp: true,
				SoftDelete:    v.soft != "",
				MissingID:     v.missingID,
				New:           v.newStore,
			})
		})
	}
}
