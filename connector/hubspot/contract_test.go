package hubspot

import (
	"fmt"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

func text(fields map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range fields {
		out[k] = fmt.Sprint(v)
	}
	return out
}

// contractStore adapts a test server to the contract suite: its clock is
// frozen and moves around each change, so that one Insert or Update call
// is one lastmodifieddate.
func contractStore(srv *hubspotemu.Server, batchSize int) *connectortest.ClockedStore {
	return &connectortest.ClockedStore{
		Advance: srv.Advance,
		OpenSource: func(t *testing.T) connector.Source {
			src := connectortest.OpenType(t, TypeName, connectortest.Fields, func(set *Settings) {
				set.Token = Secret(srv.Token())
				set.BaseURL = srv.URL
				set.PageSize = batchSize
				set.Lookback = 0 // the suite checks that a resumed read repeats nothing
				set.RateLimit, set.SearchRateLimit = 100000, 100000
			})
			src.(*Source).now = srv.Now
			return src
		},
		Add:    func(fields map[string]any) string { return srv.Add(text(fields)) },
		Set:    func(id string, fields map[string]any) error { return srv.Update(id, text(fields)) },
		Remove: srv.Archive,
	}
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
			srv := hubspotemu.NewServer(hubspotemu.Options{Seed: 99, SearchPerSecond: -1, Properties: []string{"name"}})
			t.Cleanup(srv.Close)
			srv.SetClock(base)
			return contractStore(srv, batch)
		},
	})
}
