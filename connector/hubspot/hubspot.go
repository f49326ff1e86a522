// Package hubspot is the connector of HubSpot CRM contacts (type
// "hubspot"): it reads contacts through the CRM v3 API, incrementally,
// and writes changes back through the batch endpoints.
//
// # Incremental reads
//
// Changes reads the search endpoint (POST /crm/v3/objects/contacts/search)
// in windows of lastmodifieddate. A window is [since, until): until is the
// time the window was opened (the clock at the start of a read). Inside a
// window contacts are read by ascending hs_object_id, and every page is a
// new query:
//
//	lastmodifieddate >= since AND lastmodifieddate < until AND hs_object_id > after
//	sorted by hs_object_id ascending, limit pageSize (200)
//
// where after is the last id read. This keyset paging is what makes the
// read safe whatever the data:
//
//   - it never meets the 10,000-result cap of one search query: each page
//     is its own query, which starts over at offset 0;
//   - it never loops and never skips on ties: thousands of contacts with
//     one lastmodifieddate are just consecutive ids, and after grows on
//     every page;
//   - a contact that changes or is archived while the window is read does
//     not shift the pages, as it would with offset paging (`after` of the
//     search endpoint is an offset into a result set that changes under
//     it): a changed contact's new lastmodifieddate is at or after until,
//     so the next window reads it.
//
// Each page is one batch whose checkpoint is (since, until, after). When a
// page comes back without paging.next, the window is done and its batch
// carries the next window's start: since = until, no after, and the
// window's look-back span, [until - lookback, until) on whole seconds,
// with a count of the contacts read there (per second, or per thirtieth
// of a look-back over 30 s, with their lowest and highest ids; tail.go). A new window that finds nothing leaves the
// checkpoint as it was and emits no batch (unless it counted, below).
// One read finishes at most one window, so it ends even when contacts
// keep changing.
//
// The look-back (30 s by default) is there because the search index
// shows changes some seconds late: a contact changed just before until
// but indexed after the page covering its id was read must be read by a
// later window. A new window therefore starts at the span's start and
// re-reads it, unless at least a page of contacts was read in the span
// (after a large import, say): then one search counts the contacts the
// span now holds, and when the count equals what was read there, the
// window starts at since and re-reads nothing. Re-reading fewer than a
// page costs one page at most, which is what the count costs. This covers
// an index lag plus clock skew between syncd and HubSpot of up to
// lookback. After a 10,300-contact import made within the look-back, the
// next pass makes 2 search calls where it made 52 (TestLookbackRereadIsBounded).
//
// With webhooks, a read also reads the contacts the deliveries verified
// since the last read named, through the batch read endpoint, which
// search's index lag does not delay (announced.go); the checkpoint does
// not move for them.
//
// A read of N contacts costs N/pageSize search calls, plus one for the
// final empty page when N is a multiple of the page size, plus the count.
//
// # Deletions
//
// Archiving a contact does not change its lastmodifieddate, and archived
// contacts never appear in search. Changes therefore also scans GET
// /crm/v3/objects/contacts?archived=true, which has no "since" filter: the
// whole archived list is read on every scan (one call per 100 archived
// contacts; HubSpot keeps them 90 days), plus one batch read per 100 new
// archivals, to tell merges from deletions (see Merges). The scan's own
// cursor (the newest archivedAt seen and the ids archived in the
// look-back before it) lets it emit, as Deleted records, only archivals
// not emitted before. Set archivedInterval to scan less often when the
// archived list is long.
// Both cursors travel in the one checkpoint string, as JSON.
//
// # Merges
//
// A merge of two contacts makes a contact (today a new one with a new id;
// before, the primary kept its id) whose hs_merged_object_ids names the
// ids merged into it; those contacts vanish, archived nowhere that is
// documented, and their ids read as the merged contact. Every search asks
// for hs_merged_object_ids, and each id it names comes, just before the
// merged contact, as a Deleted record with MergedInto set: the reconciler
// moves the first linked one's contact to the merged contact and applies
// onSourceDelete to the others, duplicates now (see merge.go). Whether
// HubSpot lists merged-away contacts as archived is not documented; if
// it does, the archived scan reads its new archivals once (batch read):
// an id that reads as a contact whose hs_merged_object_ids names it is
// reported as merged into it, even before search shows that contact.
//
// # Writes
//
// Write groups its changes by operation into calls of at most 100 inputs
// to the batch update, archive and create endpoints (in that order: the
// one write that is not safe to repeat comes last). Per-input failures (a
// 207 answer's errors[], named by context.ids or, for creates, by the
// objectWriteTraceId each input carries) become that change's Err; a
// whole call refused because of some inputs (400, 404, 409) is narrowed
// down, by the ids it names or by halving, to the inputs at fault.
// Created contacts' ids come from the answer: by objectWriteTraceId when
// HubSpot echoes it, else by matching the properties sent, since the
// order of the results is not documented.
//
// HubSpot's archive answers 204 even for ids that do not exist, so a
// delete first reads its ids (batch/read) and reports those not found
// with connector.ErrNotFound, as the connector contract asks; a delete
// repeated after success also reports ErrNotFound.
//
// A create call that fails after it may have been applied (5xx,
// connection lost) is not retried: the Err of each of its changes wraps
// ErrOutcomeUnknown, and the reverse pipeline must find out (e.g. search
// by email) before creating again. Once a create call may have created
// contacts, later failures of the same Write are reported per change too,
// never as a whole-call error, so that the caller never repeats a create
// that succeeded. Before that, a failure of a whole call (after retries)
// fails the Write: what it applied so far is safe to repeat.
//
// # Limits
//
// Every call waits for the connector's limiter (Options.Limiter when
// given, else one shared by the connectors of the same token, of
// rateLimit calls per 10 s), and searches also for the search limiter
// (searchRateLimit per second). 429 answers are retried after Retry-After
// when sent, else after the window of their policy (SECONDLY,
// TEN_SECONDLY_ROLLING); the DAILY policy stops the read or write with
// ErrDailyLimit. 423 answers are retried after at least 2 s; 5xx answers
// and transport failures of reads, updates and archives are retried with
// capped exponential backoff. The token is only ever sent in the
// Authorization header: it is in no error and no log.
package hubspot

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/changehook"
)

// TypeName is the connector's `type:`.
const TypeName = "hubspot"

func init() {
	connector.Register(connector.Type{
		Name:         TypeName,
		NewSettings:  func() connector.Settings { return NewSettings() },
		Open:         connector.OpenFunc(Open),
		Writable:     true,
		Incremental:  true,
		SoftDelete:   false,
		Capabilities: []connector.Capability{connector.CapGet, connector.CapCount, connector.CapFields, connector.CapNotify, connector.CapWebhook, connector.CapActivities},
	})
}

// defaultProperties are read when neither the settings nor the mapping
// name any: HubSpot's common contact properties.
var defaultProperties = []string{"email", "firstname", "lastname", "phone", "mobilephone", "company", "jobtitle", "lifecyclestage"}

// alwaysRead are the properties every read asks for.
var alwaysRead = []string{"hs_object_id", "lastmodifieddate"}

// Source is an open hubspot connector. It implements connector.Source,
// connector.Writer and connector.FieldLister.
type Source struct {
	name             string
	c                *client
	props            []string
	pageSize         int
	lookback         time.Duration
	archivedInterval time.Duration
	log              *logrus.Entry
	// now is the clock that opens read windows.
	now func() time.Time
	// The app's change webhooks (webhooks.go): off unless the settings
	// have webhooks; hookURL is the target URL entered in the app.
	changehook.Endpoint
	hookURL string
	// act is what the activity writer learns once (activities.go).
	actOnce sync.Once
	act     *activityState
}

var (
	_ connector.Source      = (*Source)(nil)
	_ connector.Writer      = (*Source)(nil)
	_ connector.FieldLister = (*Source)(nil)
)

// Open opens a hubspot connector. It makes no call: a bad token shows at
// the first read or write.
func Open(_ context.Context, opts connector.Options) (*Source, error) {
	set, log, err := connector.Prepare[*Settings](opts, TypeName)
	if err != nil {
		return nil, err
	}

	props := set.Properties
	if len(props) == 0 {
		props = opts.Fields
	}
	if len(props) == 0 {
		props = defaultProperties
	}
	props = propertyList(props)

	baseURL := strings.TrimRight(set.BaseURL, "/")
	token := Secret(strings.TrimSpace(set.Token.Reveal()))
	limiter := opts.Limiter
	if limiter == nil {
		r, b := tenSecondly(set.RateLimit)
		limiter = sharedLimiter(baseURL, token, false, r, b)
	}
	sr, sb := perSecond(set.SearchRateLimit)
	s := &Source{
		name:             opts.Name,
		c:                newClient(baseURL, token, limiter, sharedLimiter(baseURL, token, true, sr, sb), log),
		props:            props,
		pageSize:         set.PageSize,
		lookback:         set.Lookback,
		archivedInterval: set.ArchivedInterval,
		log:              log,
		now:              time.Now,
	}
	if w := set.Webhooks; w != nil {
		s.hookURL = w.URL
		s.Endpoint.Open(verifier(strings.TrimSpace(w.ClientSecret.Reveal()), w.URL), announced, webhookSettle, log)
	}
	// The search endpoint refuses bodies over 3,000 characters; a long
	// property list is the only thing that can make ours that long.
	if n := s.searchBodySize(); n > maxSearchBody {
		return nil, fmt.Errorf("open hubspot connector %s: %d properties make a search request of %d characters, over HubSpot's %d: name fewer properties",
			opts.Name, len(props), n, maxSearchBody)
	}
	return s, nil
}

// propertyList adds the always-read properties and removes duplicates.
func propertyList(names []string) []string {
	out := slices.Clone(alwaysRead)
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Properties returns the contact properties the connector reads.
func (s *Source) Properties() []string { return slices.Clone(s.props) }

// Close releases idle connections.
func (s *Source) Close() error {
	s.c.http.CloseIdleConnections()
	return nil
}

// Fields lists the contact property names of the account.
func (s *Source) Fields(ctx context.Context) ([]string, error) {
	var ans struct {
		Results []struct {
			Name string `json:"name"`
		} `json:"results"`
	}
	if _, err := s.c.do(ctx, call{method: http.MethodGet, path: "/crm/v3/properties/contacts", idempotent: true}, &ans); err != nil {
		return nil, fmt.Errorf("list contact properties: %w", err)
	}
	names := make([]string, 0, len(ans.Results))
	for _, r := range ans.Results {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	return names, nil
}

// object is a CRM object as the API answers it.
type object struct {
	ID         string             `json:"id"`
	Properties map[string]*string `json:"properties"`
	CreatedAt  string             `json:"createdAt"`
	UpdatedAt  string             `json:"updatedAt"`
	Archived   bool               `json:"archived"`
	ArchivedAt string             `json:"archivedAt"`
}

type paging struct {
	Next *struct {
		After string `json:"after"`
	} `json:"next"`
}

// record converts an object: its id, the properties read (nil when
// null), lastmodifieddate as UpdatedAt.
func (s *Source) record(o object) connector.Record {
	r := connector.Record{ID: o.ID, Fields: make(map[string]any, len(s.props))}
	if r.ID == "" {
		if v := o.Properties["hs_object_id"]; v != nil {
			r.ID = *v
		}
	}
	for _, p := range s.props {
		if v := o.Properties[p]; v != nil {
			r.Fields[p] = *v
		} else {
			r.Fields[p] = nil
		}
	}
	if v := o.Properties["lastmodifieddate"]; v != nil {
		r.UpdatedAt, _ = parseTime(*v)
	}
	if r.UpdatedAt.IsZero() {
		r.UpdatedAt, _ = parseTime(o.UpdatedAt)
	}
	return r
}

// parseTime reads HubSpot's ISO 8601 instants (and epoch milliseconds).
func parseTime(v string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), true
	}
	if ms, ok := parseInt(v); ok {
		return time.UnixMilli(ms).UTC(), true
	}
	return time.Time{}, false
}
