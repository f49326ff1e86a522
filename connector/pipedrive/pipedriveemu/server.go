// Package pipedriveemu runs an in-memory Pipedrive API for tests, the way
// net/http/httptest runs a server: NewServer starts it on a loopback port,
// Server.URL is its base URL (as https://api.pipedrive.com is), Close
// stops it.
//
// It serves what a person sync needs, as Pipedrive documents it (see
// ../FACTS.md for the sources):
//
//   - API v2 persons: GET /api/v2/persons (cursor paging, limit at most
//     500, updated_since/updated_until in RFC 3339, sort_by id, update_time
//     or add_time, ids of up to 100), GET/PATCH/DELETE /api/v2/persons/{id},
//     POST /api/v2/persons. Writes are validated as strictly as v2 is:
//     unknown keys, a string where a number belongs, a label not in the
//     list, an unknown custom field key and a create without name are 400.
//     first_name and last_name are derived from name; they cannot be
//     written.
//   - GET /api/v2/personFields (cursor paged), organizations: GET
//     /api/v2/organizations (ids), GET /api/v2/organizations/search (exact
//     name), POST /api/v2/organizations.
//   - API v1 PUT /v1/persons/{id}/merge with merge_with_id: the person
//     of the path is deleted, merge_with_id's is kept (its values first,
//     the other's e-mail addresses and phone numbers added) and answered
//     with merge_what_id.
//   - API v1 GET /v1/recents?items=person: every person changed (created,
//     updated, deleted or merged) strictly after since_timestamp, oldest
//     first, with offset paging; a deleted person has active_flag false, a
//     person another was merged into carries merge_what_id.
//   - The x-api-token header (401 without it; v2 refuses a request with
//     the api_token query parameter, v1 also takes it), burst limits per
//     token on a rolling window with x-ratelimit-limit,
//     x-ratelimit-remaining and x-ratelimit-reset on every answer and 429
//     once spent, the Search API's own limit (10 per window, its answers
//     carrying that window's headers), and a daily token budget charged
//     by Pipedrive's documented costs (429 once spent).
//   - Monetary custom fields as v2 has them: {"value": 2300, "currency":
//     "EUR"} (Money); a bare number is refused.
//
// Deleted persons leave the v2 listing and answer 404; they stay in
// recents. update_time has milliseconds (RFC 3339, "...T09:00:00.250Z"),
// from the server's clock, which tests may freeze and move (SetClock,
// Advance).
package pipedriveemu

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/syncd-io/syncd/internal/emukit"
)

// Route names one endpoint of the server, for Stats and Inject.
type Route string

// The server's routes.
const (
	RouteListPersons   Route = "GET /api/v2/persons"
	RouteGetPerson     Route = "GET /api/v2/persons/{id}"
	RouteAddPerson     Route = "POST /api/v2/persons"
	RouteUpdatePerson  Route = "PATCH /api/v2/persons/{id}"
	RouteDeletePerson  Route = "DELETE /api/v2/persons/{id}"
	RoutePersonFields  Route = "GET /api/v2/personFields"
	RouteListOrgs      Route = "GET /api/v2/organizations"
	RouteSearchOrgs    Route = "GET /api/v2/organizations/search"
	RouteAddOrg        Route = "POST /api/v2/organizations"
	RouteRecents       Route = "GET /v1/recents"
	RouteMergePersons  Route = "PUT /v1/persons/{id}/merge"
	RouteUnknown       Route = "unknown"
	defaultToken             = "pipedriveemu-token"
	defaultBurstWindow       = 2 * time.Second
	// DailyPostPutLimit is the documented fair-usage limit of POST/PUT
	// requests per day, reported in x-daily-requests-left.
	DailyPostPutLimit = 10000
	// DefaultSearchLimit is the Search API's documented limit: 10
	// requests per 2-second window on every plan.
	DefaultSearchLimit = 10
)

// Options configure a Server. The zero value has no rate limit.
type Options struct {
	// Token is the API token the server accepts; empty means
	// "pipedriveemu-token".
	Token string
	// BurstLimit is the number of requests allowed per token in any
	// BurstWindow (20 for Lite with an api_token); 0 means no limit.
	BurstLimit int
	// BurstWindow is the rolling window of BurstLimit; 0 means 2 s.
	BurstWindow time.Duration
	// SearchLimit is the number of search requests allowed per token in
	// any BurstWindow; 0 means DefaultSearchLimit, a negative number no
	// limit.
	SearchLimit int
	// DailyTokens is the company's daily token budget; 0 means none.
	DailyTokens int64
	// RecentsOmitDeleted leaves deleted persons out of GET /v1/recents:
	// Pipedrive documents the feed's person items (active_flag,
	// merge_what_id) but not that a deleted person shows in it, so a
	// client must find deletions without it too.
	RecentsOmitDeleted bool
	// CustomFields are the person custom fields the company has.
	CustomFields []CustomField
	// WebhookRetryScale multiplies the documented waits before a
	// webhook delivery's retries (3, 30, 150 s); 0 means 1.
	WebhookRetryScale float64
	// Listener, when set, is where the server listens (`syncd emulator
	// --crm pipedrive` listens on the address given); nil: a new loopback
	// port.
	Listener net.Listener
}

// CustomField is a person custom field definition.
type CustomField struct {
	// Key is the field's code; empty makes a 40-character hash.
	Key  string
	Name string
	// Type is a Pipedrive field type: varchar, text, double, int,
	// enum, set, date, phone, monetary...
	Type string
	// Options are the labels of an enum or set field; their ids are
	// their positions from 1.
	Options []string
}

// Item is one entry of a labelled list (emails, phones).
type Item struct {
	Value   string `json:"value"`
	Primary bool   `json:"primary"`
	Label   string `json:"label"`
}

// Person is a person as the server stores it.
type Person struct {
	ID         string
	Name       string
	OrgID      int64 // 0 when none
	OwnerID    int64
	Emails     []Item
	Phones     []Item
	Custom     map[string]any // custom field values by key
	AddTime    time.Time
	UpdateTime time.Time
	Deleted    bool
	// MergeWhatID is the person last merged into this one, if any.
	MergeWhatID string
}

// Fault is an answer injected in place of the normal one.
type Fault struct {
	// Status is the HTTP status to answer (429, 500, 502...).
	Status int
	// AfterApply applies the request before answering the fault, as when
	// the answer of a committed write is lost.
	AfterApply bool
}

// Stats counts the requests the server received (Requests by route,
// whatever the answer; Responses by route and status) and the tokens
// they cost.
type Stats struct {
	emukit.Counts[Route]
	// TokensSpent is the token cost of the requests charged today.
	TokensSpent int64
}

// Server is a running fake Pipedrive API.
type Server struct {
	// URL is the base URL, to use as the connector's baseURL.
	URL string

	opts Options
	http *httptest.Server

	mu       sync.Mutex
	clock    emukit.Clock
	nextID   int64
	persons  map[int64]*Person
	orgs     map[int64]string
	nextOrg  int64
	fields   []CustomField
	faults   emukit.Faults[Route, Fault]
	stats    Stats
	calls    window // real times of the burst window's requests
	searches window // real times of the Search API window's requests
	postPuts int
	// version counts changes of persons; index is the order of every
	// person by a sort key, built for the version it names.
	version int64
	index   map[string]sortedIndex
	// answered caches each person's v2 JSON (all custom fields) until it
	// changes.
	answered map[int64][]byte
	hooks    webhooks       // webhooks.go
	acts     *activityStore // activities.go
}

// NewServer starts a server. Close it when done.
func NewServer(opts Options) *Server {
	if opts.Token == "" {
		opts.Token = defaultToken
	}
	if opts.BurstWindow <= 0 {
		opts.BurstWindow = defaultBurstWindow
	}
	s := &Server{
		opts:     opts,
		nextID:   1,
		nextOrg:  1,
		persons:  map[int64]*Person{},
		orgs:     map[int64]string{},
		faults:   emukit.Faults[Route, Fault]{},
		index:    map[string]sortedIndex{},
		answered: map[int64][]byte{},
		stats:    Stats{Counts: emukit.NewCounts[Route]()},
	}
	for i, f := range opts.CustomFields {
		if f.Key == "" {
			f.Key = hashKey(i, f.Name)
		}
		s.fields = append(s.fields, f)
	}
	s.hooks.ctx, s.hooks.stop = context.WithCancel(context.Background())
	s.hooks.client = &http.Client{}
	s.http = emukit.Serve(opts.Listener, http.HandlerFunc(s.serve))
	s.URL = s.http.URL
	return s
}

// Close stops the server and its webhook deliveries.
func (s *Server) Close() {
	s.hooks.mu.Lock() // no delivery starts once stopped (notifyLocked)
	s.hooks.stop()
	s.hooks.mu.Unlock()
	s.hooks.wg.Wait()
	s.http.Close()
}

// Token returns the API token the server accepts.
func (s *Server) Token() string { return s.opts.Token }

// CustomFields returns the custom field definitions, with their keys.
func (s *Server) CustomFields() []CustomField {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CustomField(nil), s.fields...)
}

// SetClock freezes the server's clock at t.
func (s *Server) SetClock(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock.Freeze(t)
}

// Advance moves the clock forward by d (frozen or not).
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock.Advance(d)
}

// Now returns the server's clock.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

func (s *Server) nowLocked() time.Time { return s.clock.Now() }

// stampLocked is the clock in milliseconds: update_time's precision in
// API v2 (RFC 3339 with milliseconds, "2024-01-01T00:00:00.000Z").
func (s *Server) stampLocked() time.Time { return s.nowLocked().Truncate(time.Millisecond) }

// Add stores a person as if made in the app and returns its id. Name is
// required; AddTime and UpdateTime default to the clock.
func (s *Server) Add(p Person) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID
	s.nextID++
	p.ID = strconv.FormatInt(id, 10)
	if p.UpdateTime.IsZero() {
		p.UpdateTime = s.stampLocked()
	}
	if p.AddTime.IsZero() {
		p.AddTime = p.UpdateTime
	}
	p.Emails, p.Phones = primaryFirst(p.Emails), primaryFirst(p.Phones)
	p.Custom = cloneMap(p.Custom)
	s.persons[id] = &p
	s.version++
	s.notifyLocked(&p, "create")
	return p.ID
}

// Edit changes a person as if edited in the app: fn changes the copy it
// is given, and update_time moves to the clock.
func (s *Server) Edit(id string, fn func(p *Person)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.liveLocked(id)
	if !ok {
		return errNotFound(id)
	}
	c := clonePerson(*p)
	fn(&c)
	c.ID, c.UpdateTime, c.MergeWhatID = p.ID, s.stampLocked(), ""
	*p = c
	s.changedLocked(p)
	return nil
}

// Delete deletes a person as the app does: it leaves the listings and
// shows in recents with active_flag false.
func (s *Server) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.liveLocked(id)
	if !ok {
		return errNotFound(id)
	}
	p.Deleted, p.UpdateTime = true, s.stampLocked()
	s.changedLocked(p)
	return nil
}

// Merge merges person id into person withID, as PUT
// /v1/persons/{id}/merge with merge_with_id does in the app.
func (s *Server) Merge(id, withID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.mergeLocked(id, withID)
	return err
}

// mergeLocked merges person id into person withID: withID keeps its
// values ("prioritized in case of conflict"), takes the other's where it
// has none and the other's e-mail addresses and phone numbers it lacks,
// and carries merge_what_id; id is deleted.
func (s *Server) mergeLocked(id, withID string) (*Person, error) {
	loser, ok := s.liveLocked(id)
	if !ok {
		return nil, errNotFound(id)
	}
	keep, ok := s.liveLocked(withID)
	if !ok || keep == loser {
		return nil, errNotFound(withID)
	}
	now := s.stampLocked()
	keep.Emails = mergeItems(keep.Emails, loser.Emails)
	keep.Phones = mergeItems(keep.Phones, loser.Phones)
	if keep.OrgID == 0 {
		keep.OrgID = loser.OrgID
	}
	for k, v := range loser.Custom {
		if keep.Custom[k] == nil {
			if keep.Custom == nil {
				keep.Custom = map[string]any{}
			}
			keep.Custom[k] = v
		}
	}
	keep.UpdateTime, keep.MergeWhatID = now, loser.ID
	loser.Deleted, loser.UpdateTime = true, now
	s.changedLocked(loser)
	s.changedLocked(keep)
	return keep, nil
}

// Get returns a copy of a person, deleted or not.
func (s *Server) Get(id string) (Person, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return Person{}, false
	}
	p, ok := s.persons[n]
	if !ok {
		return Person{}, false
	}
	return clonePerson(*p), true
}

// Persons returns copies of the live persons by ascending id.
func (s *Server) Persons() []Person {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Person
	for _, p := range s.sortedLocked() {
		if !p.Deleted {
			out = append(out, clonePerson(*p))
		}
	}
	return out
}

// OrgName returns the name of an organization, "" when it has none.
func (s *Server) OrgName(id int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.orgs[id]
}

// AddOrg stores an organization and returns its id.
func (s *Server) AddOrg(name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addOrgLocked(name)
}

func (s *Server) addOrgLocked(name string) int64 {
	id := s.nextOrg
	s.nextOrg++
	s.orgs[id] = name
	return id
}

// NewDay resets the daily token budget and POST/PUT count, as midnight
// does.
func (s *Server) NewDay() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.TokensSpent, s.postPuts = 0, 0
}

// Inject queues faults on a route: its next requests answer them, in
// order, before it answers normally again.
func (s *Server) Inject(r Route, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults.Push(r, faults...)
}

// Stats returns a copy of the request counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Counts: s.stats.Clone(), TokensSpent: s.stats.TokensSpent}
}

// changedLocked notes that p changed: the sort indexes and its cached
// answer are stale.
func (s *Server) changedLocked(p *Person) {
	s.version++
	delete(s.answered, idOf(p))
	if p.Deleted {
		s.notifyLocked(p, "delete")
	} else {
		s.notifyLocked(p, "change")
	}
}

func (s *Server) liveLocked(id string) (*Person, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, false
	}
	p, ok := s.persons[n]
	if !ok || p.Deleted {
		return nil, false
	}
	return p, true
}

func (s *Server) sortedLocked() []*Person {
	out := make([]*Person, 0, len(s.persons))
	for _, p := range s.persons {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return idOf(out[i]) < idOf(out[j]) })
	return out
}

func idOf(p *Person) int64 {
	n, _ := strconv.ParseInt(p.ID, 10, 64)
	return n
}

func clonePerson(p Person) Person {
	p.Emails = append([]Item(nil), p.Emails...)
	p.Phones = append([]Item(nil), p.Phones...)
	p.Custom = cloneMap(p.Custom)
	return p
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// mergeItems appends the items of add whose value keep lacks, as not
// primary.
func mergeItems(keep, add []Item) []Item {
	have := map[string]bool{}
	for _, it := range keep {
		have[it.Value] = true
	}
	for _, it := range add {
		if !have[it.Value] {
			it.Primary = false
			keep = append(keep, it)
		}
	}
	return primaryFirst(keep)
}

// primaryFirst makes exactly one item primary (the first marked, else
// the first) when the list is not empty.
func primaryFirst(items []Item) []Item {
	if len(items) == 0 {
		return nil
	}
	out := append([]Item(nil), items...)
	found := false
	for i := range out {
		if out[i].Primary && !found {
			found = true
			continue
		}
		out[i].Primary = false
	}
	if !found {
		out[0].Primary = true
	}
	return out
}
