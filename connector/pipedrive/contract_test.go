package pipedrive

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedrivetest"
)

var base = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// suiteFields are the record fields that stand for the suite's name,
// email and phone: a person's name and the work items of its labelled
// lists, so that the suite exercises the lists.
var suiteFields = map[string]string{"name": fieldName, "email": "emails.work", "phone": "phones.work"}

// contractStore adapts a test server to the contract suite. Its clock is
// frozen and moves one second before and after each change, so that one
// Insert or Update call is one update_time.
type contractStore struct {
	srv       *pipedrivetest.Server
	batchSize int
}

func openOn(t *testing.T, srv *pipedrivetest.Server, pageSize int, fields []string) *Source {
	t.Helper()
	typ, ok := connector.Lookup(TypeName)
	if !ok {
		t.Fatal("pipedrive type not registered")
	}
	set := typ.NewSettings().(*Settings)
	set.APIToken = connector.Secret(srv.Token())
	set.BaseURL = srv.URL
	set.PageSize = pageSize
	set.Lookback = 0 // the suite checks that a resumed read repeats nothing
	set.RateLimit = 100000
	src, err := typ.Open(context.Background(), connector.Options{Name: "contract", Settings: set, Fields: fields})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	src.(*Source).now = srv.Now
	return src.(*Source)
}

func (s *contractStore) Open(t *testing.T) connector.Source {
	fields := make([]string, 0, len(suiteFields))
	for _, f := range connectortest.Fields {
		fields = append(fields, suiteFields[f])
	}
	return openOn(t, s.srv, s.batchSize, fields)
}

func personOf(fields map[string]any) pipedrivetest.Person {
	p := pipedrivetest.Person{Name: fmt.Sprint(fields["name"])}
	if v, ok := fields["email"]; ok {
		p.Emails = []pipedrivetest.Item{{Value: fmt.Sprint(v), Label: "work", Primary: true}}
	}
	if v, ok := fields["phone"]; ok {
		p.Phones = []pipedrivetest.Item{{Value: fmt.Sprint(v), Label: "work", Primary: true}}
	}
	return p
}

func (s *contractStore) Insert(t *testing.T, recs ...map[string]any) []string {
	s.srv.Advance(time.Second)
	ids := make([]string, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, s.srv.Add(personOf(r)))
	}
	s.srv.Advance(time.Second)
	return ids
}

func (s *contractStore) Update(t *testing.T, fields map[string]any, ids ...string) {
	s.srv.Advance(time.Second)
	for _, id := range ids {
		err := s.srv.Edit(id, func(p *pipedrivetest.Person) {
			n := personOf(fields)
			if _, ok := fields["name"]; ok {
				p.Name = n.Name
			}
			if n.Emails != nil {
				p.Emails = n.Emails
			}
			if n.Phones != nil {
				p.Phones = n.Phones
			}
		})
		if err != nil {
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

func TestContract(t *testing.T) {
	typ, _ := connector.Lookup(TypeName)
	const batch = 4
	connectortest.RunSourceSuite(t, connectortest.Harness{
		Type:          typ,
		BatchSize:     batch,
		SameTimestamp: true,
		// Deleted persons show in the recents feed, which Changes reads.
		SoftDelete: true,
		MissingID:  "987654321",
		FieldNames: suiteFields,
		New: func(t *testing.T) connectortest.Store {
			srv := pipedrivetest.NewServer(pipedrivetest.Options{})
			t.Cleanup(srv.Close)
			srv.SetClock(base)
			return &contractStore{srv: srv, batchSize: batch}
		},
	})
}
