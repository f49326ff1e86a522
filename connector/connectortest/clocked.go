package connectortest

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// ClockedStore is a Store on a test server whose clock stands still until
// moved, as the CRM test servers' do. It moves the clock one second
// before and after each change, so that one Insert or Update call is one
// change time (Harness.SameTimestamp) that no other call shares.
type ClockedStore struct {
	// Advance moves the server's clock.
	Advance func(time.Duration)
	// OpenSource is Store.Open.
	OpenSource func(t *testing.T) connector.Source
	// Add adds one record holding fields (the suite's names) and
	// returns its ID.
	Add func(fields map[string]any) string
	// Set sets fields (the suite's names) on the record id.
	Set func(id string, fields map[string]any) error
	// Remove deletes the record id the way the system does.
	Remove func(id string) error
}

var _ Store = (*ClockedStore)(nil)

// Open opens a source on the server.
func (s *ClockedStore) Open(t *testing.T) connector.Source { return s.OpenSource(t) }

// Insert adds recs, all at one change time.
func (s *ClockedStore) Insert(t *testing.T, recs ...map[string]any) []string {
	s.Advance(time.Second)
	ids := make([]string, 0, len(recs))
	for _, r := range recs {
		ids = append(ids, s.Add(r))
	}
	s.Advance(time.Second)
	return ids
}

// Update sets fields on every record of ids, all at one change time.
func (s *ClockedStore) Update(t *testing.T, fields map[string]any, ids ...string) {
	s.Advance(time.Second)
	for _, id := range ids {
		if err := s.Set(id, fields); err != nil {
			t.Fatal(err)
		}
	}
	s.Advance(time.Second)
}

// Delete deletes the record id at a change time of its own.
func (s *ClockedStore) Delete(t *testing.T, id string) {
	s.Advance(time.Second)
	if err := s.Remove(id); err != nil {
		t.Fatal(err)
	}
	s.Advance(time.Second)
}

// OpenType opens a source of the registered connector type typeName,
// named "contract", reading fields, with the type's default settings
// changed by configure. It fails the test if the type is not registered
// (its package is not linked in) or the source does not open.
func OpenType[S connector.Settings](t *testing.T, typeName string, fields []string, configure func(S)) connector.Source {
	t.Helper()
	typ, ok := connector.Lookup(typeName)
	if !ok {
		t.Fatalf("%s type not registered", typeName)
	}
	set := typ.NewSettings().(S)
	configure(set)
	src, err := typ.Open(context.Background(), connector.Options{Name: "contract", Settings: set, Fields: fields})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return src
}
