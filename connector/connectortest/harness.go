// Package connectortest is the contract test suite that every connector
// passes: a connector's own test adapts its backing system (a file, a
// table, a fake CRM) to a Harness, and RunSourceSuite checks reading,
// checkpoints, deletions, cancellation and, for writable connectors,
// write-back against the rules of package connector. ClockedStore and
// OpenType hold what the CRM connectors' stores share: a test server
// whose clock moves only around each change, and opening a registered
// type with adjusted settings. OpenLive, WantFields and FirstBatch hold
// what their read-only tests against real accounts share.
package connectortest

import (
	"testing"

	"github.com/syncd-io/syncd/connector"
)

// Fields are the record fields the suite writes and reads. A Store's
// backing system has them as text fields, next to whatever it needs for
// IDs, change times and deletion marks.
var Fields = []string{"name", "email", "phone"}

// Harness adapts one connector to the suite.
type Harness struct {
	// Type is the connector's registered type; Incremental and Writable
	// select the checks that apply.
	Type connector.Type
	// BatchSize is the batch size the sources opened by Store.Open are
	// configured with. Keep it small (2 to 10) so that reads span several
	// batches.
	BatchSize int
	// SameTimestamp is true when the records of one Store.Insert or
	// Store.Update call share one change time, as rows written by one
	// PostgreSQL transaction do. The suite then checks that a batch
	// boundary inside such a group skips and repeats nothing.
	SameTimestamp bool
	// SoftDelete is true when Store.Delete marks a record deleted (rather
	// than removing it) and Changes reports it as a Deleted record. Write
	// is then tested with Soft deletes too.
	SoftDelete bool
	// MissingID is an ID that no record has, well-formed for the system
	// (for integer IDs, a large number). Required for writable connectors.
	MissingID string
	// FieldNames names the connector's fields for the suite's Fields,
	// for systems whose objects have fixed field names (a Salesforce
	// Contact has LastName, Email and Phone, and no writable name);
	// nil means the suite's names. Records read and changes written use
	// the connector's names; a Store's Insert and Update get the suite's.
	FieldNames map[string]string
	// New prepares a fresh, empty backing store for one test and removes
	// it at the test's cleanup.
	New func(t *testing.T) Store
}

// Store is one backing store of a connector under test. Its methods fail
// the test on error.
type Store interface {
	// Open opens a source on the store, configured with the harness's
	// batch size and an exact checkpoint (no look-back window or other
	// deliberate overlap): the suite checks that a resumed incremental
	// read repeats nothing. The suite closes the source.
	Open(t *testing.T) connector.Source
	// Insert adds records holding the given fields and returns their IDs
	// in order.
	Insert(t *testing.T, recs ...map[string]any) []string
	// Update sets fields on every record of ids, as one change of the
	// system (one change time when the harness has SameTimestamp).
	Update(t *testing.T, fields map[string]any, ids ...string)
	// Delete deletes a record the way the system does (soft or hard).
	Delete(t *testing.T, id string)
}

// field returns the connector's name of a suite field.
func (h Harness) field(k string) string {
	if n, ok := h.FieldNames[k]; ok {
		return n
	}
	return k
}

// named renames a record's suite fields to the connector's names.
func (h Harness) named(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[h.field(k)] = v
	}
	return out
}
