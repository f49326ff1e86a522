package hubspot

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/hubspot/hubspottest"
)

// contractStore adapts a test server to the contract suite. Its clock is
// frozen and moves one second before and after each change, so that one
// Insert or Update call is one lastmodifieddate.
type contractStore struct {
	srv       *hubspottest.Server
	batchSize int
}

func (s *contractStore) Open(t *testing.T) connector.Source {
	t.Helper()
	typ, ok := connector.Lookup(TypeName)
	if !ok {
		t.Fatal("hubspot type not registered")
	}
	set := typ.NewSettings().(*Settings)
	set.Token = Secret(s.srv.Token())
	set.BaseURL = s.srv.URL
	set.PageSize = s.batchSize
	set.Lookback = 0 // the suite checks that a resumed read repeats nothing
	set.RateLimit, set.SearchRateLimit = 100000, 100000
	src, err := typ.Open(context.Background(), connector.Options{Name: "contract", Settings: set, Fields: connectortest.Fields})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	src.(*Source).now = s.srv.Now
	return src
}

func text(fields map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range fields {
		out[k] = fmt.Sprint(v)
	}
	return out
}

func (s *contractStore) Insert(t *testing.T, recs ...map[string]any) []string {
	s.srv.Advance(time.Second)
	ids := make([]string, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, s.srv.Add(text(r)))
	}
	s.srv.Advance(time.Second)
	return ids
}

func (s *contractStore) Update(t *testing.T, fields map[string]any, ids ...string) {
	s.srv.Advance(time.Second)
	for _, id := range ids {
		if err := s.srv.Update(id, text(fields)); err != nil {
			t.Fatal(err)
		}
	}
	s.srv.Advance(time.Second)
}

func (s *contractStore) Delete(t *testing.T, id string) {
	s.srv.Advance(time.Second)
	if err := s.srv.Archive(id); err != nil {
		t.Fatal(err)
	}
	s.srv.Advance(time.Second)
}

func TestContract(t *testing.T) {
	typ, _ := connector.Lookup(TypeName)
	const batch = 4
	connectortest.RunSourceSuite(t, connectortest.Harness{
		Type:          typ,
		BatchSize:     batch,
		SameTimestamp: true,
		// Archiving is HubSpot's deletion, and Changes reports it as a
		// Deleted record.
		SoftDelete: true,
		MissingID:  "987654321987",
		New: func(t *testing.T) connectortest.Store {
			srv := hubspottest.NewServer(hubspottest.Options{Seed: 99, SearchPerSecond: -1, Properties: []string{"name"}})
			t.Cleanup(srv.Close)
			srv.SetClock(base)
			return &contractStore{srv: srv, batchSize: batch}
		},
	})
}
