// Package hubspotemu runs an in-memory HubSpot CRM v3 contacts API for
// tests, the way net/http/httptest runs a server: NewServer starts it on a
// loopback port, Server.URL is its base URL, Close stops it.
//
// The server follows HubSpot's documented behaviour where it matters to a
// sync tool: Bearer token auth (401 with HubSpot's error body), the search
// endpoint with filterGroups, one sort, limit at most 200, offset-style
// `after` paging and the 10,000-result cap (paging past it answers 400),
// filter count limits and the 3,000-character body limit, the list
// endpoint (limit at most 100, `archived=true`), the batch create, update,
// read and archive endpoints (at most 100 inputs, 207 multi-status partial
// failures, 201 on create, 204 on archive), the per-app ten-secondly limit,
// the per-second search limit and the daily limit with HubSpot's 429 body
// and headers. lastmodifieddate is set from the server's clock on create
// and update, never on archive; archived contacts never appear in search.
// An optional search index lag makes a change searchable only some time
// after it was made, as HubSpot's search index does. Merges (the merge
// endpoint, or Server.Merge) make a new contact carrying
// hs_merged_object_ids, and the merged-away ids read (GET by id, batch
// read) as that contact; see Merge.
//
// Behaviour the public documentation leaves open is chosen conservatively
// and noted on the method or option concerned. Everything random (ids,
// correlation ids, the order of batch create results) derives from
// Options.Seed.
package hubspotemu

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/internal/emukit"
)

// Route names one endpoint of the server, for Stats and Inject.
type Route string

// The server's routes.
const (
	RouteSearch            Route = "POST /crm/v3/objects/contacts/search"
	RouteList              Route = "GET /crm/v3/objects/contacts"
	RouteListArchived      Route = "GET /crm/v3/objects/contacts?archived=true"
	RouteBatchCreate       Route = "POST /crm/v3/objects/contacts/batch/create"
	RouteBatchUpdate       Route = "POST /crm/v3/objects/contacts/batch/update"
	RouteBatchRead         Route = "POST /crm/v3/objects/contacts/batch/read"
	RouteBatchArchive      Route = "POST /crm/v3/objects/contacts/batch/archive"
	RouteProperties        Route = "GET /crm/v3/properties/contacts"
	RouteMerge             Route = "POST /crm/v3/objects/contacts/merge"
	RouteGet               Route = "GET /crm/v3/objects/contacts/{contactId}"
	listPath                     = "/crm/v3/objects/contacts"
	RouteUnknown           Route = "unknown"
	defaultToken                 = "hubspotemu-token"
	maxSearchResults             = 10000
	maxSearchLimit               = 200
	maxListLimit                 = 100
	maxBatchInputs               = 100
	maxSearchBodyChars           = 3000
	maxFilterGroups              = 5
	maxFiltersPerGroup           = 6
	maxFiltersTotal              = 18
	defaultSearchPerSecond       = 5
	dateLayout                   = "2006-01-02T15:04:05.000Z"
	defaultRateWindow            = 10 * time.Second
	searchRateWindow             = time.Second
)

// Options configure a Server. The zero value is a server with HubSpot's
// documented search limit (5 per second) and no other rate limit.
type Options struct {
	// Token is the private app token the server accepts; empty means
	// "hubspotemu-token".
	Token string
	// Seed makes ids, correlation ids and result orders reproducible.
	Seed uint64
	// RateLimit is the number of requests allowed per RateWindow across
	// every route (HubSpot's TEN_SECONDLY_ROLLING policy: 100 for
	// Free/Starter, 190 for Professional/Enterprise); 0 means no limit.
	RateLimit int
	// RateWindow is the rolling window of RateLimit; 0 means 10 s.
	RateWindow time.Duration
	// SearchPerSecond is the search limit (policy SECONDLY); 0 means the
	// documented 5, a negative value means no limit.
	SearchPerSecond int
	// DailyLimit is the number of requests allowed before every request
	// answers 429 with policy DAILY; 0 means no limit.
	DailyLimit int
	// SearchLag is how long after a change the search index shows it.
	// Until then search answers the previous version (or nothing, for a
	// new contact). The list and batch endpoints are never late.
	SearchLag time.Duration
	// Properties are extra contact property names the account defines,
	// beyond the standard ones (see StandardProperties).
	Properties []string
	// KeepBatchOrder answers batch create results in input order. By
	// default they are shuffled (with Seed): HubSpot does not document
	// their order, and its documented multi-status results carry no
	// objectWriteTraceId, so a client must not rely on the order.
	KeepBatchOrder bool
	// LegacyMerge makes a merge keep the primary contact's id, as HubSpot
	// did before merges of contacts made a new contact (see Merge).
	LegacyMerge bool
	// ArchiveMerged lists merged-away contacts among the archived ones
	// (archivedAt the merge). HubSpot does not document whether it does;
	// by default they are in no list, only their ids point to the merged
	// contact.
	ArchiveMerged bool
	// Listener, when set, is where the server listens (`syncd emulator
	// --crm hubspot` listens on the address given); nil: a new loopback
	// port.
	Listener net.Listener
}

// StandardProperties are the contact properties every server knows.
var StandardProperties = []string{
	"address", "city", "company", "country", "createdate", "email", "fax",
	"firstname", "hs_merged_object_ids", "hs_object_id", "jobtitle", "lastmodifieddate", "lastname",
	"lifecyclestage", "mobilephone", "phone", "state", "website", "zip",
}

// readOnlyProperties are computed by the server; writes to them fail.
var readOnlyProperties = map[string]bool{"hs_object_id": true, "createdate": true, "lastmodifieddate": true, mergedProperty: true}

// Contact is a contact as the server stores it.
type Contact struct {
	ID         string
	Properties map[string]string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	Archived   bool
	ArchivedAt time.Time
	// MergedInto is the id of the contact this one was merged into
	// (directly or through later merges); empty for a contact not merged
	// away.
	MergedInto string
}

// Fault is an answer injected in place of the normal one.
type Fault struct {
	// Status is the HTTP status to answer (429, 423, 500, 502...); 0
	// lets the request through, to fail a later one.
	Status int
	// PolicyName goes in a 429 body: TEN_SECONDLY_ROLLING (default),
	// SECONDLY or DAILY.
	PolicyName string
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string
	// AfterApply applies the request before answering the fault, as when
	// HubSpot fails after committing a write or the answer is lost.
	AfterApply bool
}

// Stats counts the requests the server received (Requests by route,
// whatever the answer; Responses by route and status).
type Stats struct{ emukit.Counts[Route] }

// RateLimited returns the number of 429 answers on route.
func (s Stats) RateLimited(r Route) int { return s.Responses[r][http.StatusTooManyRequests] }

// Server is a running fake HubSpot API.
type Server struct {
	// URL is the base URL, to use as the connector's baseURL.
	URL string

	opts Options
	http *httptest.Server

	mu       sync.Mutex
	rng      *rand.Rand
	clock    emukit.Clock
	nextID   int64
	contacts map[int64]*contact
	order    []*contact // by ascending id
	props    map[string]bool
	faults   emukit.Faults[Route, Fault]
	stats    Stats
	calls    []time.Time // real times of counted calls, for RateLimit
	searches []time.Time // real times of searches, for SearchPerSecond
	daily    int
	emails   map[string]int64 // lower-cased email of live contacts
	hooks    webhooks         // the app's webhooks (webhooks.go)
	eng      *engagements     // calls and communications (activities.go)
}

type contact struct {
	id         int64
	props      map[string]string
	createdAt  time.Time
	updatedAt  time.Time
	archived   bool
	archivedAt time.Time
	// mergedInto is the contact this one was merged into; 0 when it was
	// not merged away.
	mergedInto int64
	// versions are what the search index holds, oldest first; the one
	// searched is the newest whose visibleAt is not after the clock.
	versions []version
}

type version struct {
	props     map[string]string
	updatedAt time.Time
	createdAt time.Time
	archived  bool
	visibleAt time.Time
}

// NewServer starts a server. Close it when done.
func NewServer(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = defaultToken
	}
	if opts.RateWindow <= 0 {
		opts.RateWindow = defaultRateWindow
	}
	if opts.SearchPerSecond == 0 {
		opts.SearchPerSecond = defaultSearchPerSecond
	}
	s := &Server{
		opts:     opts,
		rng:      rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		contacts: map[int64]*contact{},
		props:    map[string]bool{},
		faults:   emukit.Faults[Route, Fault]{},
		clock:    emukit.Clock{Precision: time.Millisecond},
		emails:   map[string]int64{},
	}
	s.nextID = 1000 + int64(s.rng.IntN(1000))
	for _, p := range StandardProperties {
		s.props[p] = true
	}
	for _, p := range opts.Properties {
		s.props[p] = true
	}
	s.resetStatsLocked()
	s.http = emukit.Serve(opts.Listener, http.HandlerFunc(s.serve))
	s.URL = s.http.URL
	return s
}

// Close stops the server and its webhooks.
func (s *Server) Close() {
	s.closeWebhooks()
	s.http.Close()
}

// Token returns the token the server accepts.
func (s *Server) Token() string { return s.opts.Token }

// Now returns the server's clock, to the millisecond.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

func (s *Server) nowLocked() time.Time { return s.clock.Now() }

// SetSearchLag sets Options.SearchLag for the changes made from now on.
func (s *Server) SetSearchLag(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.SearchLag = d
}

// SetClock freezes the server's clock at t (until Advance or SetClock).
func (s *Server) SetClock(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock.Freeze(t)
}

// Advance moves the clock forward by d, frozen or not.
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock.Advance(d)
}

// Add creates a contact with props at the server's clock and returns its
// id. It panics on a read-only or unknown property, which is a test bug.
func (s *Server) Add(props map[string]string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range props {
		if readOnlyProperties[k] || !s.props[k] {
			panic(fmt.Sprintf("hubspotemu: Add with property %q", k))
		}
	}
	return strconv.FormatInt(s.createLocked(props).id, 10)
}

// Update changes a contact's properties at the server's clock; an empty
// value clears the property.
func (s *Server) Update(id string, props map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.liveLocked(id)
	if c == nil {
		return fmt.Errorf("hubspotemu: no live contact %s", id)
	}
	s.updateLocked(c, props)
	return nil
}

// Archive archives a contact, as the batch archive endpoint does: its
// lastmodifieddate does not change.
func (s *Server) Archive(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.liveLocked(id)
	if c == nil {
		return fmt.Errorf("hubspotemu: no live contact %s", id)
	}
	s.archiveLocked(c)
	return nil
}

// Restore brings an archived contact back, as HubSpot's recycle bin does.
// The documentation does not say whether a restore changes
// lastmodifieddate; the server sets it to the clock, so that a restored
// contact is found by incremental searches.
func (s *Server) Restore(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, _ := strconv.ParseInt(id, 10, 64)
	c := s.contacts[n]
	if c == nil || !c.archived || c.mergedInto != 0 {
		return fmt.Errorf("hubspotemu: no archived contact %s", id)
	}
	c.archived = false
	c.archivedAt = time.Time{}
	if e := strings.ToLower(c.props["email"]); e != "" {
		s.emails[e] = c.id
	}
	s.touchLocked(c)
	return nil
}

// Contact returns a contact, live, archived or merged away.
func (s *Server) Contact(id string) (Contact, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || s.contacts[n] == nil {
		return Contact{}, false
	}
	c := s.contacts[n].export()
	if s.contacts[n].mergedInto != 0 {
		c.MergedInto = strconv.FormatInt(s.resolveLocked(s.contacts[n]).id, 10)
	}
	return c, true
}

// Contacts returns the live contacts, by id.
func (s *Server) Contacts() []Contact {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Contact
	for _, c := range s.order {
		if !c.archived && c.mergedInto == 0 {
			out = append(out, c.export())
		}
	}
	return out
}

// Inject queues faults for route: each request to it answers the next
// queued fault instead of (or, with AfterApply, after) its normal answer.
func (s *Server) Inject(r Route, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.Push(r, faults...)
}

// Stats returns a copy of the request counts.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{s.stats.Clone()}
}

// ResetStats zeroes the request counts.
func (s *Server) ResetStats() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetStatsLocked()
}

func (s *Server) resetStatsLocked() {
	s.stats = Stats{emukit.NewCounts[Route]()}
}

func (c *contact) export() Contact {
	props := make(map[string]string, len(c.props))
	for k, v := range c.props {
		props[k] = v
	}
	return Contact{
		ID: strconv.FormatInt(c.id, 10), Properties: props,
		CreatedAt: c.createdAt, UpdatedAt: c.updatedAt,
		Archived: c.archived, ArchivedAt: c.archivedAt,
	}
}

func (s *Server) liveLocked(id string) *contact {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil
	}
	c := s.contacts[n]
	if c == nil || c.archived || c.mergedInto != 0 {
		return nil
	}
	return c
}

func (s *Server) createLocked(props map[string]string) *contact {
	now := s.nowLocked()
	id := s.nextID
	s.nextID += 1 + int64(s.rng.IntN(7)) // increasing, not contiguous
	c := &contact{id: id, props: map[string]string{}, createdAt: now}
	for k, v := range props {
		if v != "" {
			c.props[k] = v
		}
	}
	c.props["hs_object_id"] = strconv.FormatInt(id, 10)
	c.props["createdate"] = now.Format(dateLayout)
	s.contacts[id] = c
	s.order = append(s.order, c) // ids only grow: order stays sorted
	if e := strings.ToLower(c.props["email"]); e != "" {
		s.emails[e] = id
	}
	s.touchLocked(c)
	return c
}

func (s *Server) updateLocked(c *contact, props map[string]string) {
	for k, v := range props {
		if k == "email" {
			delete(s.emails, strings.ToLower(c.props["email"]))
			if v != "" {
				s.emails[strings.ToLower(v)] = c.id
			}
		}
		if v == "" {
			delete(c.props, k)
		} else {
			c.props[k] = v
		}
	}
	// HubSpot does not document whether writing an unchanged value moves
	// lastmodifieddate; the server always moves it, the case that asks
	// more of a sync tool's echo detection.
	s.touchLocked(c)
}

func (s *Server) archiveLocked(c *contact) {
	now := s.nowLocked()
	c.archived = true
	c.archivedAt = now
	delete(s.emails, strings.ToLower(c.props["email"]))
	// Archived contacts leave search at once; lastmodifieddate is kept.
	s.addVersionLocked(c, now, now)
}

// touchLocked sets lastmodifieddate to the clock and queues the new
// version for the search index.
func (s *Server) touchLocked(c *contact) {
	now := s.nowLocked()
	c.updatedAt = now
	c.props["lastmodifieddate"] = now.Format(dateLayout)
	s.addVersionLocked(c, now, now.Add(s.opts.SearchLag))
}

func (s *Server) addVersionLocked(c *contact, now, visibleAt time.Time) {
	props := make(map[string]string, len(c.props))
	for k, v := range c.props {
		props[k] = v
	}
	var prev *version
	if n := len(c.versions); n > 0 {
		prev = &c.versions[n-1]
	}
	s.eventsLocked(c, prev)
	c.versions = append(c.versions, version{
		props: props, updatedAt: c.updatedAt, createdAt: c.createdAt,
		archived: c.archived || c.mergedInto != 0, visibleAt: visibleAt,
	})
	// Drop the versions hidden by a newer visible one.
	keep := 0
	for i, v := range c.versions {
		if !v.visibleAt.After(now) {
			keep = i
		}
	}
	c.versions = c.versions[keep:]
}

// indexed returns the version of c that search sees at now, if any.
func (c *contact) indexed(now time.Time) (version, bool) {
	for i := len(c.versions) - 1; i >= 0; i-- {
		if v := c.versions[i]; !v.visibleAt.After(now) {
			return v, !v.archived
		}
	}
	return version{}, false
}

func (s *Server) correlationIDLocked() string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", s.rng.Uint32(), s.rng.Uint32()&0xffff,
		s.rng.Uint32()&0xffff, s.rng.Uint32()&0xffff, s.rng.Uint64()&0xffffffffffff)
}
