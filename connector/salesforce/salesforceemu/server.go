// Package salesforceemu runs an in-memory Salesforce org for tests, the
// way net/http/httptest runs a server: NewServer starts two loopback
// servers, the login host (Server.LoginURL, the OAuth token endpoint) and
// the instance (Server.InstanceURL, the REST API, which the token answer's
// instance_url names), Close stops them.
//
// It follows Salesforce's documented behaviour where a sync tool depends
// on it (connector/salesforce/FACTS.md gives the sources):
//
//   - OAuth 2.0 client credentials and JWT bearer token requests, with
//     Salesforce's {error, error_description} answers; access tokens
//     expire after Options.SessionCalls API calls (or on ExpireSessions)
//     and are then answered 401 INVALID_SESSION_ID;
//   - a strict SOQL subset for query and queryAll (SELECT fields, or
//     COUNT(), FROM object WHERE ... ORDER BY ... LIMIT n): unknown fields answer
//     INVALID_FIELD, anything else it does not understand MALFORMED_QUERY;
//     results come in batches of at most 2,000 (Sforce-Query-Options
//     batchSize 200 to 2,000) with done, totalSize and nextRecordsUrl;
//     query locators live 2 days (API 56.0 and later; 15 minutes unused
//     before);
//   - queryAll shows deleted and merged records (IsDeleted, MasterRecordId)
//     until they are purged; query never does;
//   - getDeleted and getUpdated as documented: the seconds of start and
//     end are ignored, start must precede end by more than one minute
//     (else INVALID_REPLICATION_DATE), start goes back at most 15 days
//     (getDeleted) or 30 days (getUpdated) before the day of the call,
//     latestDateCovered is a whole minute no later than end (earlier while
//     HoldReplication holds it), and a start before earliestDateAvailable
//     (the delete log purged past it) is refused;
//   - sObject Collections create, update and delete: at most 200 records,
//     allOrNone, one result per record in order with its own errors[]
//     (statusCode, message, fields): required fields (Contact LastName,
//     Lead LastName and Company), field lengths, e-mail syntax, validation
//     rules, record locks (UNABLE_TO_LOCK_ROW);
//   - describe; the Sforce-Limit-Info header on every API answer, and 403
//     REQUEST_LIMIT_EXCEEDED once the daily allowance is spent.
//
// SystemModstamp, LastModifiedDate and CreatedDate carry milliseconds, as
// Salesforce's dateTimes do (2026-01-05T09:00:00.250+0000): the server's
// clock (SetClock, Advance, to the millisecond) moves only when a test
// says so, unless Options.RealClock is set. Fail makes the next answers
// of a route an error, for the tests of what a client does then.
package salesforceemu

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/internal/emukit"
)

// Route names one endpoint, for Stats.
type Route string

// The server's routes.
const (
	RouteToken        Route = "POST /services/oauth2/token"
	RouteQuery        Route = "GET /query"
	RouteQueryAll     Route = "GET /queryAll"
	RouteQueryMore    Route = "GET /query/{locator}"
	RouteDescribe     Route = "GET /sobjects/{object}/describe"
	RouteDeleted      Route = "GET /sobjects/{object}/deleted"
	RouteUpdated      Route = "GET /sobjects/{object}/updated"
	RouteCreate       Route = "POST /composite/sobjects"
	RouteUpdate       Route = "PATCH /composite/sobjects"
	RouteDelete       Route = "DELETE /composite/sobjects"
	RouteUnknown      Route = "unknown"
	defaultClientID         = "salesforceemu-client"
	defaultSecret           = "salesforceemu-secret"
	defaultDailyLimit       = 100000
	maxBatch                = 2000
	minBatch                = 200
	maxCollection           = 200
	locatorTTL              = 15 * time.Minute // before API 56.0: 15 minutes unused
	locatorTTL56            = 48 * time.Hour   // from API 56.0: 2 days
	deleteLogDays           = 15               // getDeleted goes back 15 days
	updatedDays             = 30               // getUpdated goes back 30 days
)

// ValidationRule refuses a record the way an org's validation rule does:
// the record's errors[] entry has statusCode
// FIELD_CUSTOM_VALIDATION_EXCEPTION, the rule's error Message, and fields
// [Field] (an empty list when the rule shows its error at the top of the
// page rather than at a field); the other records of the call are saved.
type ValidationRule struct {
	Name string
	// Object is the sObject the rule belongs to ("Contact"); empty means
	// every object.
	Object  string
	Field   string
	Message string
	// Refuse reports whether the record, as it would be saved (field API
	// names as the describe spells them; nil for null), breaks the rule.
	Refuse func(rec map[string]any) bool
}

// Options configure a Server.
type Options struct {
	// ClientID and ClientSecret are the connected app's; empty means
	// "salesforceemu-client" and "salesforceemu-secret".
	ClientID, ClientSecret string
	// JWTUsername and JWTKey enable the JWT bearer flow for that user,
	// verified with the certificate's public key.
	JWTUsername string
	JWTKey      any // *rsa.PublicKey
	// SessionCalls expires every access token after that many API calls
	// made with it; 0 means never.
	SessionCalls int
	// DailyLimit is the org's daily API allowance; 0 means 100,000.
	DailyLimit int64
	// Used is the allowance already spent today when the server starts.
	Used int64
	// ValidationRules are the org's validation rules (any object).
	ValidationRules []ValidationRule
	// CustomFields adds text fields (API names ending in __c) to Contact
	// and Lead.
	CustomFields []string
	// RealClock makes the server's clock the wall clock (truncated to the
	// millisecond) instead of the settable one.
	RealClock bool
	// LoginListener and InstanceListener, when set, are where the login
	// host and the instance listen (`syncd emulator --crm salesforce`
	// listens on the addresses given); nil: a new loopback port each.
	LoginListener, InstanceListener net.Listener
}

// Server is a running test org.
type Server struct {
	// LoginURL is the token endpoint's host; InstanceURL the API's.
	LoginURL, InstanceURL string

	login, inst *httptest.Server
	opts        Options

	mu         sync.Mutex
	clock      time.Time
	objects    map[string]*object // by lower-case name
	seq        int64
	tokens     map[string]*session
	tokenSeq   int
	tokenFails int
	used       int64
	locators   map[string]*locator
	locSeq     int
	locks      map[string]int // record id -> writes still refused
	stats      Stats
	reads      map[string]int
	// holdReplication, when set, is the latestDateCovered of getDeleted
	// and getUpdated while a transaction is in flight (HoldReplication).
	holdReplication *time.Time
	faults          map[Route][]answer
	// lose counts the calls of a route applied whose answer is lost.
	lose map[Route]int
}

type session struct {
	calls   int
	expired bool
}

// Stats counts requests and answers by route, and the records sent.
type Stats struct {
	emukit.Counts[Route]
	// Records counts records sent in query and queryAll answers.
	Records int
}

// NewServer starts a server.
func NewServer(opts Options) *Server {
	if opts.ClientID == "" {
		opts.ClientID = defaultClientID
	}
	if opts.ClientSecret == "" {
		opts.ClientSecret = defaultSecret
	}
	if opts.DailyLimit == 0 {
		opts.DailyLimit = defaultDailyLimit
	}
	for _, f := range opts.CustomFields {
		if !strings.HasSuffix(f, "__c") {
			panic(fmt.Sprintf("salesforceemu: custom field %q does not end in __c", f))
		}
	}
	s := &Server{
		opts:     opts,
		clock:    time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC),
		objects:  map[string]*object{},
		tokens:   map[string]*session{},
		used:     opts.Used,
		locators: map[string]*locator{},
		locks:    map[string]int{},
		reads:    map[string]int{},
		faults:   map[Route][]answer{},
		lose:     map[Route]int{},
		stats:    Stats{Counts: emukit.NewCounts[Route]()},
	}
	for _, o := range append([]*object{newObject("Contact", "003", contactFields, opts.CustomFields), newObject("Lead", "00Q", leadFields, opts.CustomFields)}, activityObjects()...) {
		s.objects[strings.ToLower(o.name)] = o
	}
	s.login = emukit.Serve(opts.LoginListener, http.HandlerFunc(s.serveLogin))
	s.inst = emukit.Serve(opts.InstanceListener, http.HandlerFunc(s.serveAPI))
	s.LoginURL, s.InstanceURL = s.login.URL, s.inst.URL
	return s
}

// Close stops both servers.
func (s *Server) Close() {
	s.login.Close()
	s.inst.Close()
}

// ClientID returns the connected app's client id.
func (s *Server) ClientID() string { return s.opts.ClientID }

// ClientSecret returns the connected app's client secret.
func (s *Server) ClientSecret() string { return s.opts.ClientSecret }

// Now returns the server's clock.
func (s *Server) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

func (s *Server) nowLocked() time.Time {
	if s.opts.RealClock {
		return time.Now().UTC().Truncate(time.Millisecond)
	}
	return s.clock
}

// SetClock sets the server's clock (to the millisecond).
func (s *Server) SetClock(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = t.UTC().Truncate(time.Millisecond)
}

// Advance moves the server's clock forward (to the millisecond).
func (s *Server) Advance(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = s.clock.Add(d).Truncate(time.Millisecond)
}

// HoldReplication makes getDeleted and getUpdated answer a
// latestDateCovered no later than t (its minute), as while a transaction
// that started then has not completed; the zero time releases it.
func (s *Server) HoldReplication(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.IsZero() {
		s.holdReplication = nil
		return
	}
	h := t.UTC().Truncate(time.Minute)
	s.holdReplication = &h
}

// Fail makes the next n calls of route answer status with Salesforce's
// error body (errorCode code, message msg, fields), after the session and
// allowance checks: a 503 of an overloaded instance, or a refusal the
// tests need that the org's data would not produce.
func (s *Server) Fail(route Route, n, status int, code, msg string, fields ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults[route] = append(s.faults[route], errorAnswer(status, code, msg, fields...))
	}
}

// ExpireSessions makes every access token issued so far invalid, as a
// revoked or timed-out session is.
func (s *Server) ExpireSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tokens {
		t.expired = true
	}
}

// SetUsed sets the org's API usage of the day.
func (s *Server) SetUsed(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = n
}

// Used returns the org's API usage of the day.
func (s *Server) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

// LockRecord makes the next n writes of the record fail with
// UNABLE_TO_LOCK_ROW, as when another transaction holds its lock.
func (s *Server) LockRecord(id string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.locks[id15(id)] = n
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Counts: s.stats.Clone(), Records: s.stats.Records}
}

// ReadCounts returns how many times each record was sent in a query or
// queryAll answer.
func (s *Server) ReadCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.reads))
	for k, v := range s.reads {
		out[k] = v
	}
	return out
}

// ResetReadCounts forgets the read counts.
func (s *Server) ResetReadCounts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = map[string]int{}
}

// Record is a copy of one record.
type Record struct {
	ID             string
	Object         string
	Fields         map[string]any // by API name; nil values are null
	CreatedDate    time.Time
	SystemModstamp time.Time
	IsDeleted      bool
	MasterRecordID string
}

// Records returns the object's records, deleted ones too, by id.
func (s *Server) Records(objectName string) []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects[strings.ToLower(objectName)]
	if o == nil {
		return nil
	}
	out := make([]Record, 0, len(o.records))
	for _, r := range o.sorted() {
		out = append(out, r.copy(o))
	}
	return out
}

// Get returns one record (deleted ones too) by its 15- or 18-character id.
func (s *Server) Get(id string) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.objects {
		if r := o.records[id15(id)]; r != nil && !r.purged {
			return r.copy(o), true
		}
	}
	return Record{}, false
}

func (r *record) copy(o *object) Record {
	c := Record{ID: r.id, Object: o.name, Fields: map[string]any{}, CreatedDate: r.created,
		SystemModstamp: r.modstamp, IsDeleted: r.deleted, MasterRecordID: r.master}
	for k, v := range r.values {
		c.Fields[o.fields[k].Name] = v
	}
	return c
}

func (o *object) sorted() []*record {
	out := make([]*record, 0, len(o.records))
	for _, r := range o.records {
		if !r.purged {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
