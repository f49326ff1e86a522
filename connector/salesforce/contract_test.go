package salesforce

import (
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
)

// contractFields names the Contact fields that stand for the suite's:
// a Contact's name is its LastName (Name is computed, read-only).
var contractFields = map[string]string{"name": "LastName", "email": "Email", "phone": "Phone"}

func named(rec map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range rec {
		out[contractFields[k]] = v
	}
	return out
}

// contractStore adapts a test org to the contract suite: its clock is
// frozen and moves around each change, so that one Insert or Update call
// is one SystemModstamp.
func contractStore(srv *salesforceemu.Server) *connectortest.ClockedStore {
	return &connectortest.ClockedStore{
		Advance: srv.Advance,
		OpenSource: func(t *testing.T) connector.Source {
			fields := make([]string, 0, len(connectortest.Fields))
			for _, f := range connectortest.Fields {
				fields = append(fields, contractFields[f])
			}
			src := connectortest.OpenType(t, TypeName, fields, func(set *Settings) {
				set.LoginURL = srv.LoginURL
				set.ClientID, set.ClientSecret = Secret(srv.ClientID()), Secret(srv.ClientSecret())
				set.PageSize = contractBatch
				set.Settle = 0 // the test org's clock moves only when the suite says
				set.RateLimit = 100000
			})
			src.(*Source).now = srv.Now
			return src
		},
		Add:    func(fields map[string]any) string { return srv.Add("Contact", named(fields)) },
		Set:    func(id string, fields map[string]any) error { return srv.Update(id, named(fields)) },
		Remove: srv.Delete,
	}
}

// contractBatch is the smallest query batch Salesforce takes.
const contractBatch = 200

func TestContract(t *testing.T) {
	typ, _ := connector.Lookup(TypeName)
	connectortest.RunSourceSuite(t, connectortest.Harness{
		Type:          typ,
		BatchSize:     contractBatch,
		SameTimestamp: true,
		// A deleted record shows in queryAll (IsDeleted) and Changes
		// reports it as a Deleted record.
		SoftDelete: true,
		MissingID:  salesforceemu.MakeID("0035g0000ZZZZZZ"),
		FieldNames: contractFields,
		New: func(t *testing.T) connectortest.Store {
			srv := salesforceemu.NewServer(salesforceemu.Options{})
			t.Cleanup(srv.Close)
			return contractStore(srv)
		},
	})
}
