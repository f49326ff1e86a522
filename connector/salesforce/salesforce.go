// Package salesforce is the connector of Salesforce Contacts or Leads
// (type "salesforce"): it reads records through the REST API's query
// resources, incrementally, and writes changes back through sObject
// Collections. FACTS.md beside this file lists the documented behaviour
// it relies on, with sources.
//
// # Authentication
//
// The connector asks the login host (settings.loginURL) for an access
// token with the OAuth 2.0 client credentials flow (clientId and
// clientSecret) or the JWT bearer flow (clientId, username, privateKey).
// Every API call goes to the token answer's instance_url, not to the
// login host. An answer 401 INVALID_SESSION_ID (the session timed out or
// was revoked) makes the connector fetch one new token and repeat the
// call: the call was refused, not applied, so no write is lost or
// repeated; callers that meet the expiry together cause one fetch.
//
// # Incremental reads
//
// Changes reads windows [since, until) of SystemModstamp, until being the
// clock when the window opens less settle (1 minute by default), with one SOQL query through queryAll (so
// that deleted and merged records show, with IsDeleted and
// MasterRecordId):
//
//	SELECT ... FROM Contact
//	WHERE SystemModstamp >= since AND SystemModstamp < until
//	  AND (SystemModstamp > ts OR (SystemModstamp = ts AND Id > 'id'))
//	ORDER BY SystemModstamp, Id
//
// and follows its nextRecordsUrl, a page (at most pageSize, 2,000) per
// batch. Each batch's checkpoint holds (since, until, ts, id), the key of
// its last record, ts to the millisecond as Salesforce gives it: a read
// resumed after a crash starts a new query after that key, so thousands
// of records sharing one SystemModstamp across page boundaries are
// neither skipped nor read twice. (The key goes into SOQL with its
// milliseconds; an org that refuses them gets whole seconds, and the
// records of the key's second it sends again are dropped by key.) The window's last
// batch carries the next window's start, since = until: windows neither
// overlap nor leave a gap, and a change is read once, by the first
// window that opens at least settle after it. The settle time is there
// for a transaction that commits after its SystemModstamp (and for a
// clock of syncd's ahead of Salesforce's): up to settle late, it is
// still read. A new window that finds nothing emits no batch. SystemModstamp is the
// records' UpdatedAt; syncd's own writes move it too, and the reverse
// direction's link hashes recognise them as echoes.
//
// # Deletions and merges
//
// A record deleted or merged into another shows in queryAll with
// IsDeleted (while it is in the Recycle Bin, 15 days): it is a Deleted
// record, and when its MasterRecordId is set it carries MergedInto, so
// that its contact is re-linked to the surviving record instead of
// deleted (reconcile moves it before the batch's other records, so a
// survivor in the same page finds it). Records merged in one second are
// read in Id order: a survivor older than the merged record, not linked
// yet, and read in an earlier page gets a contact of its own first; the
// merged record's contact then follows onSourceDelete. (A survivor that
// already has a contact always does: the merged one's is the duplicate.)
//
// At the end of each window the connector also reads getDeleted
// (/sobjects/{object}/deleted/?start=&end=) from where it stopped last
// time (the previous answer's latestDateCovered), to catch records purged
// from the Recycle Bin before a window read them. Salesforce ignores the
// seconds of start and end and refuses a start not more than one minute
// before the end, so the connector sends whole minutes and asks only for
// a range of two minutes or more; a shorter one waits for a later window.
// A scan that fails never holds a window back: its records are recorded
// and it closes, an unavailable scan is asked again by the next window,
// and a refused one (the delete log was purged past its start) is logged
// with the fix, a full resync, and not asked again. getDeleted's
// earliestDateAvailable later than the start means deletions were lost
// from Salesforce's log, and the connector says so too.
//
// # Writes
//
// Write sends updates, then deletes, then creates through sObject
// Collections (/composite/sobjects), at most 200 records a call, with
// allOrNone false: each record's own errors[] (statusCode, message,
// fields) becomes that change's error, naming the field, and the others
// of the call are written. A definite refusal of the data (a validation
// rule's FIELD_CUSTOM_VALIDATION_EXCEPTION, a required field, ...) is a
// *connector.RefusedError for creates and updates alike; a call refused
// as a whole with a 400 is split until the refusal is pinned on the
// records that caused it. A record refused with UNABLE_TO_LOCK_ROW
// is sent again, in the next call, up to four times. A create that would
// leave a required field (Contact LastName, Lead LastName and Company)
// empty is refused before any call, naming the field and the fix (a
// mapping fallback); syncd never makes a value up. Values go as the
// describe types them (numbers, checkboxes, text). Conditional
// updates (IfUnchangedSince) read the records' SystemModstamp first and
// are refused with connector.ErrChanged when it moved: Salesforce's
// collections take no precondition, so a change in the short gap between
// that read and the write is not detected. A create call that failed
// after it may have been applied is not repeated: its changes' errors
// wrap remote.ErrOutcomeUnknown.
//
// # Limits
//
// Every answer's Sforce-Limit-Info (api-usage=N/M) is recorded; Quotas
// reports it. Once N reaches dailyBudget of M no further call is made:
// reads and writes end with an error wrapping connector.ErrBudgetSpent,
// and the daemon resumes at the next schedule. The allowance is a rolling
// 24-hour window that only an answer shows has moved, so each read makes
// its first call whatever the usage last seen (and any call may go once
// that figure is 10 minutes old). REQUEST_LIMIT_EXCEEDED (the org's whole
// allowance spent) ends them the same way. Calls are paced by a limiter
// shared by the connectors of one login host and client id.
package salesforce

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/remote"
)

// TypeName is the connector's `type:`.
const TypeName = "salesforce"

func init() {
	connector.Register(connector.Type{
		Name:         TypeName,
		NewSettings:  func() connector.Settings { return NewSettings() },
		Open:         connector.OpenFunc(Open),
		Writable:     true,
		Incremental:  true,
		Capabilities: []connector.Capability{connector.CapGet, connector.CapCount, connector.CapFields, connector.CapWritableFields, connector.CapQuota, connector.CapActivities},
	})
}

// defaultFields are read when the mapping names none.
var defaultFields = map[string][]string{
	"Contact": {"FirstName", "LastName", "Email", "Phone", "MobilePhone", "Title"},
	"Lead":    {"FirstName", "LastName", "Company", "Email", "Phone", "MobilePhone", "Title"},
}

// systemFields are read on every query, beside the record's fields.
var systemFields = []string{"Id", "SystemModstamp", "IsDeleted", "MasterRecordId"}

// Source is an open salesforce connector. It implements connector.Source,
// Writer, Getter, FieldLister and QuotaReporter.
type Source struct {
	name     string
	object   string
	c        *client
	fields   []string // record fields, as the mapping names them
	pageSize int
	settle   time.Duration
	log      *logrus.Entry
	// now is the clock that opens read windows.
	now func() time.Time

	descMu sync.Mutex
	desc   *description
	// secondLiterals is set once the org refused a SOQL dateTime with
	// milliseconds: keys are sent as whole seconds from then on.
	secondLiterals atomic.Bool
	// owners are the users activities were given, by e-mail (activities.go).
	owners owners
}

var (
	_ connector.Source        = (*Source)(nil)
	_ connector.Writer        = (*Source)(nil)
	_ connector.Getter        = (*Source)(nil)
	_ connector.FieldLister   = (*Source)(nil)
	_ connector.QuotaReporter = (*Source)(nil)

	_ connector.WritableFieldLister = (*Source)(nil)
)

// Open opens a salesforce connector. It makes no call: bad credentials
// show at the first read or write.
func Open(_ context.Context, opts connector.Options) (*Source, error) {
	set, log, err := connector.Prepare[*Settings](opts, TypeName)
	if err != nil {
		return nil, err
	}
	obj := objectName(set.Object)
	loginURL := strings.TrimRight(set.LoginURL, "/")
	httpc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone(), Timeout: 2 * time.Minute}
	auth := &authenticator{loginURL: loginURL, clientID: strings.TrimSpace(set.ClientID.Reveal()),
		clientSecret: strings.TrimSpace(set.ClientSecret.Reveal()), username: strings.TrimSpace(set.Username), audience: set.audience(),
		http: httpc, now: time.Now, sleep: remote.Sleep}
	if strings.TrimSpace(set.PrivateKey.Reveal()) != "" {
		auth.key, _ = parsePrivateKey(set.PrivateKey.Reveal()) // Validate checked it
	}
	limiter := opts.Limiter
	if limiter == nil {
		limiter = remote.SharedLimiter(loginURL, auth.clientID, "", rate.Limit(set.RateLimit), max(1, int(set.RateLimit)))
	}
	fields := opts.Fields
	if len(fields) == 0 {
		fields = defaultFields[obj]
	}
	s := &Source{
		name:   opts.Name,
		object: obj,
		c: &client{
			auth: auth, version: "v" + set.APIVersion, limiter: limiter, http: httpc,
			header: http.Header{"Sforce-Query-Options": {fmt.Sprintf("batchSize=%d", set.PageSize)}},
			quota:  &quota{budget: set.DailyBudget, now: time.Now},
			log:    log, sleep: remote.Sleep,
		},
		fields:   recordFields(fields),
		pageSize: set.PageSize,
		settle:   set.Settle,
		log:      log,
		now:      time.Now,
	}
	return s, nil
}

// recordFields drops blanks, duplicates (field names are
// case-insensitive) and the system fields read anyway.
func recordFields(names []string) []string {
	seen := map[string]bool{}
	for _, f := range systemFields {
		seen[strings.ToLower(f)] = true
	}
	var out []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if k := strings.ToLower(n); n != "" && !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	return out
}

// Close releases idle connections.
func (s *Source) Close() error {
	s.c.http.CloseIdleConnections()
	return nil
}

// Quotas reports the org's daily API allowance as last seen.
func (s *Source) Quotas() []connector.Quota { return s.c.quota.quotas() }

// Object returns the sObject the connector syncs.
func (s *Source) Object() string { return s.object }

// SetClock replaces the clock that opens read windows (by default the
// system clock): tests run the connector on a test org's clock.
func (s *Source) SetClock(now func() time.Time) { s.now = now }
