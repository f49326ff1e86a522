package pipedrive

import (
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
)

var base = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// suiteFields are the record fields that stand for the suite's name,
// email and phone: a person's name and the work items of its labelled
// lists, so that the suite exercises the lists.
var suiteFields = map[string]string{"name": fieldName, "email": "emails.work", "phone": "phones.work"}

func openOn(t *testing.T, srv *pipedriveemu.Server, pageSize int, fields []string) *Source {
	t.Helper()
	src := connectortest.OpenType(t, TypeName, fields, func(set *Settings) {
		set.APIToken = connector.Secret(srv.Token())
		set.BaseURL = srv.URL
		set.PageSize = pageSize
		set.Lookback = 0 // the suite checks that a resumed read repeats nothing
		set.RateLimit = 100000
	}).(*Source)
	src.now = srv.Now
	return src
}

func personOf(fields map[string]any) pipedriveemu.Person {
	p := pipedriveemu.Person{Name: fmt.Sprint(fields["name"])}
	if v, ok := fields["email"]; ok {
		p.Emails = []pipedriveemu.Item{{Value: fmt.Sprint(v), Label: "work", Primary: true}}
	}
	if v, ok := fields["phone"]; ok {
		p.Phones = []pipedriveemu.Item{{Value: fmt.Sprint(v), Label: "work", Primary: true}}
	}
	return p
}

// setPerson sets the suite's fields of one person.
func setPerson(fields map[string]any) func(p *pipedriveemu.Person) {
	n := personOf(fields)
	return func(p *pipedriveemu.Person) {
		if _, ok := fields["name"]; ok {
			p.Name = n.Name
		}
		if n.Emails != nil {
			p.Emails = n.Emails
		}
		if n.Phones != nil {
			p.Phones = n.Phones
		}
	}
}

// contractStore adapts a test server to the contract suite: its clock is
// frozen and moves around each change, so that one Insert or Update call
// is one update_time.
func contractStore(srv *pipedriveemu.Server, batchSize int, idScan bool) *connectortest.ClockedStore {
	return &connectortest.ClockedStore{
		Advance: srv.Advance,
		OpenSource: func(t *testing.T) connector.Source {
			fields := make([]string, 0, len(suiteFields))
			for _, f := range connectortest.Fields {
				fields = append(fields, suiteFields[f])
			}
			src := openOn(t, srv, batchSize, fields)
			if idScan {
				src.idScanInterval = 0 // every read scans the ids
			}
			return src
		},
		Add:    func(fields map[string]any) string { return srv.Add(personOf(fields)) },
		Set:    func(id string, fields map[string]any) error { return srv.Edit(id, setPerson(fields)) },
		Remove: srv.Delete,
	}
}

func TestContract(t *testing.T) {
	tests := []struct {
		name   string
		idScan bool
	}{
		// Deleted persons show in the recents feed, which Changes reads.
		{name: "deletions from recents"},
		// The feed shows none (Pipedrive does not document that it
		// does): the id scan on every read finds them.
		{name: "deletions from the id scan", idScan: true},
	}
	typ, _ := connector.Lookup(TypeName)
	const batch = 4
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			connectortest.RunSourceSuite(t, connectortest.Harness{
				Type:          typ,
				BatchSize:     batch,
				SameTimestamp: true,
				SoftDelete:    true,
				MissingID:     "987654321",
				FieldNames:    suiteFields,
				New: func(t *testing.T) connectortest.Store {
					srv := pipedriveemu.NewServer(pipedriveemu.Options{RecentsOmitDeleted: tt.idScan})
					t.Cleanup(srv.Close)
					srv.SetClock(base)
					return contractStore(srv, batch, tt.idScan)
				},
			})
		})
	}
}
