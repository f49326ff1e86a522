package state

import (
	"sync"
	"time"
)

// flightTTL is how long a Flight is kept: its events come within seconds
// (a webhook's delivery), or, retried, within minutes. Past maxFlights
// (a resync patching hundreds of contacts a second), those older than
// flightBusyTTL are forgotten: memory stays bounded at a few MiB.
const (
	flightTTL     = 5 * time.Minute
	flightBusyTTL = 30 * time.Second
	maxFlights    = 10000
)

// Flight is a forward patch of a contact as the forward direction sent
// and weighed it. An app edit that lands while the patch is in flight,
// and whose event reaches the inbox only after the pass's last look at
// it (Seq), is overwritten by the patch unweighed: its version is older
// than the patch's answer, which the link records, and the write-back
// would drop it as stale (issue 35: the poll soak, an app edit 1 ms
// before syncd's delayed patch landed). The write-back weighs such a
// version against the patch with the times kept here. Flights are kept
// in memory only, for flightTTL: a crash between a patch's answer and
// its late event loses one.
type Flight struct {
	// Seq is the last inbox event the pass weighed: later events are
	// ones it did not.
	Seq uint64
	// Answer is the updatedAt of the patch's answer; LinkAt the link's
	// ContactUpdatedAt as saved with it (the link is still the patch's
	// while it holds LinkAt).
	Answer, LinkAt time.Time
	// Before are the patched targets' values before the patch, as the
	// pass knew them; Wrote the values patched. Record are the record's
	// values, RecordAt when the record came to hold them, and Linked
	// what the link agrees on with the patch: the record's values, but
	// where the patch put back an app edit that won over the record's
	// (the link keeps its last agreed value there, for the write-back to
	// bring the app's to the record).
	Before, Wrote, Record, Linked map[string]string
	RecordAt                      map[string]time.Time
	at                            time.Time
}

// flights is the in-memory table of Flights, by connector and contact.
type flights struct {
	mu     sync.Mutex
	m      map[[2]string]Flight
	pruned time.Time
}

// PutFlight records the flight of a patch of the contact (replacing the
// last one's), and forgets those older than flightTTL.
func (s *Reverse) PutFlight(connector, contactID string, f Flight) {
	now := s.now()
	f.at = now
	s.flights.mu.Lock()
	defer s.flights.mu.Unlock()
	if s.flights.m == nil {
		s.flights.m = map[[2]string]Flight{}
	}
	if len(s.flights.m) >= maxFlights || now.Sub(s.flights.pruned) > flightTTL/10 {
		ttl := flightTTL
		if len(s.flights.m) >= maxFlights {
			ttl = flightBusyTTL
		}
		for k, old := range s.flights.m {
			if now.Sub(old.at) > ttl {
				delete(s.flights.m, k)
			}
		}
		s.flights.pruned = now
	}
	s.flights.m[[2]string{connector, contactID}] = f
}

// FlightOf returns the last flight recorded of a patch of the contact.
func (s *Reverse) FlightOf(connector, contactID string) (Flight, bool) {
	s.flights.mu.Lock()
	defer s.flights.mu.Unlock()
	f, ok := s.flights.m[[2]string{connector, contactID}]
	return f, ok
}
