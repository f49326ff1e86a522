package salesforce

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/salesforce/salesforcetest"
)

// contractFields names the Contact fields that stand for the suite's:
// a Contact's name is its LastName (Name is computed, read-only).
var contractFields = map[string]string{"name": "LastName", "email": "Email", "phone": "Phone"}

// contractStore adapts a test org to the contract suite. Its clock is
// frozen and moves one second before and after each change, so that one
// Insert or Update call is one SystemModstamp.
type contractStore struct {
	srv *salesforcetest.Server
}

func (s *contractStore) Open(t *testing.T) connector.Source {
	t.Helper()
	typ, ok := connector.Lookup(TypeName)
	if !ok {
		t.Fatal("salesforce type not registered")
	}
	set := typ.NewSettings().(*Settings)
	set.LoginURL = s.srv.LoginURL
	set.ClientID, set.ClientSecret = Secret(s.srv.ClientID()), Secret(s.srv.ClientSecret())
	set.PageSize = contractBatch
	set.Settle = 0 // the test org's clock moves only when the suite says
	set.RateLimit = 100000
	fields := make([]string, 0, len(connectortest.Fields))
	for _, f := range connectortest.Fields {
		fields = append(fields, contractFields[f])
	}
	src, err := typ.Open(context.Background(), connector.Options{Name: "contract", Settings: set, Fields: fields})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	src.(*Source).now = s.srv.Now
	return src
}

func named(rec map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range rec {
		out[contractFields[k]] = v
	}
	return out
}

func (s *contractStore) Insert(t *testing.T, recs ...map[string]any) []string {
	s.srv.Advance(time.Second)
	ids := make([]string, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, s.srv.Add("Contact", named(r)))
	}
	s.srv.Advance(time.Second)
	return ids
}

func (s *contractStore) Update(t *testing.T, fields map[string]any, ids ...string) {
	s.srv.Advance(time.Second)
	for _, id := range ids {
		if err := s.srv.Update(id, named(fields)); err != nil {
			t.Fatal(err)
		}
	}
	s.srv.Advance(time.Second)
}

func (s *contractStore) Delete(t *testing.T, id string) {
	s.srv.Advance(time.Second)
	if err := s.srv.Delete(id); err != nil {
		t.Fatal(err)
	}
	s.srv.Advance(time.Second)
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
		MissingID:  salesforcetest.MakeID("0035g0000ZZZZZZ"),
		FieldNames: contractFields,
		New: func(t *testing.T) connectortest.Store {
			srv := salesforcetest.NewServer(salesforcetest.Options{})
			t.Cleanup(srv.Close)
			return &contractStore{srv: srv}
		},
	})
}
