// Package pipedrive is the connector of Pipedrive persons (type
// "pipedrive"): it reads persons through API v2, incrementally, finds
// deleted and merged persons in the v1 recents feed, and writes changes
// back one person at a time. FACTS.md lists the documented behaviour it
// relies on, with sources.
//
// # Record fields
//
// A person's record has id, name, first_name, last_name, org_id,
// org_name, owner_id, add_time and update_time; its labelled lists as
// emails.<label> and phones.<label> (the first item with the label:
// emails work, home, other; phones work, home, mobile, other) and
// emails.primary, phones.primary (the primary item); its custom fields as
// custom_fields.<key>, the 40-character key Pipedrive gives each (syncd
// validate lists them with their names). Option ids of single and multiple
// option fields read as their labels.
//
// # Incremental reads
//
// Changes reads GET /api/v2/persons in windows of update_time:
// updated_since = since (inclusive), updated_until = until (exclusive),
// sorted by update_time ascending, following next_cursor. A window's until
// is the clock at its opening less lookback, in whole seconds (v2 stamps
// update_time in milliseconds; a window of whole seconds holds every
// millisecond of them). The cursor marks the first person of the
// next page, so persons sharing one update_time across a page boundary are
// read once each; a person changed while the window is read gets an
// update_time at or after until and is read by the next window. Each page
// is one batch whose checkpoint is (since, until, cursor); the window's
// last page carries (until, -, -). A window that finds nothing leaves the
// checkpoint as it was. One read finishes at most one window. The first
// read of the process, and a read after a verified webhook, then read
// the persons changed from the window's end up to the clock, with the
// checkpoint unchanged (recent.go).
//
// # Deletions and merges
//
// Deleted persons leave the v2 listing: that is what Pipedrive documents,
// and the id scan relies on it. Every idScanInterval (default 6h) Changes
// lists every live person's id and emits each known id the listing lacks
// once as a Deleted record; the known ids are the previous scan's and
// those the windows read since, kept in the checkpoint (delta-encoded,
// deflated). A fresh checkpoint only starts the interval.
//
// The recents feed (GET /v1/recents, items=person, since_timestamp) is
// kept where its documented person item suffices: merge_what_id names the
// person merged into the one listed, and active_flag false a person no
// longer active. Changes scans it before the window (at most once per
// deletionsInterval) and emits each deletion once; a person merged away
// is emitted Deleted with MergedInto set to the person it was merged
// into, so that its link moves there instead of the contact being
// deleted. Deletions the feed reports leave the known ids. The feed
// answers changes after since_timestamp, in seconds; the scan asks from
// one second before the newest time it has seen and skips the deletions
// it already emitted. A page without deletions emits nothing: its
// progress rides on the next batch. The first read starts the feed at its
// own start: persons deleted before it were never linked.
//
// A person merged away with no merge_what_id in the feed arrives as a
// plain deletion (from the feed or the id scan). The kept person took its
// e-mail addresses and phone numbers, and changed at the merge, so
// Survivor (connector.SurvivorFinder) names the one active person of the
// feed's pages with deletions, or of an id scan with deletions, holding
// one of them: the reconciler moves the contact there.
//
// # Writes
//
// Updates read the persons first (GET /api/v2/persons?ids=, 100 a call):
// to honour IfUnchangedSince (compared in milliseconds, update_time's
// precision in v2), to compose name from first_name and
// last_name (v2 writes only name), to keep a monetary field's currency
// (records carry the amount; a write sends {"value", "currency"} with the
// person's currency for the field, else the currency setting), and to
// send each labelled list whole
// with only the mapped labels' items changed, so that items syncd does
// not map survive. org_name is written through the organization record:
// an organization of that exact name is found (or created) and the
// person's org_id set to it. Creates (POST) come last; one that fails
// after it may have been applied is not repeated: its Err wraps
// ErrOutcomeUnknown. A definite refusal (a 400 validation error, any 4xx
// in Pipedrive's error body but 401, 408 and 429) is the change's own
// *connector.RefusedError naming Pipedrive's message, sent once; 429s,
// 5xx and lost answers fail the call, which is tried again.
//
// # Limits
//
// Calls go through internal/remote's request loop. Every call waits for
// the limiter shared by the connectors of one token (remote.SharedLimiter:
// one short of rateLimit requests per 2-second window, lowered to the
// x-ratelimit-limit Pipedrive announces). A burst 429 holds every call on
// the token (remote's pause gate) until x-ratelimit-reset has passed; a
// 429 while the window still has requests left means the daily token
// budget is spent, and the pass stops with ErrDailyBudget
// (connector.ErrBudgetSpent). The Search API has a window of its own (10
// searches per 2 s): searches wait for a limiter of their own, its
// answers' headers leave the token's limiter alone, and a search's 429
// only makes that search wait, never stops the pass for the day. Calls are counted in tokens
// by Pipedrive's documented costs against tokenBudget, and the quotas seen
// in the headers are reported to /status and /metrics.
package pipedrive

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/changehook"
	"github.com/syncd-io/syncd/internal/remote"
)

// TypeName is the connector's `type:`.
const TypeName = "pipedrive"

func init() {
	connector.Register(connector.Type{
		Name:         TypeName,
		NewSettings:  func() connector.Settings { return NewSettings() },
		Open:         connector.OpenFunc(Open),
		Writable:     true,
		Incremental:  true,
		Capabilities: []connector.Capability{connector.CapGet, connector.CapFields, connector.CapFieldNames, connector.CapQuota, connector.CapSurvivor, connector.CapNotify, connector.CapWebhook, connector.CapActivities},
	})
}

// Source is an open pipedrive connector.
type Source struct {
	name              string
	c                 *client
	want              []string // record fields to fill; nil: all
	pageSize          int
	lookback          time.Duration
	deletionsInterval time.Duration
	idScanInterval    time.Duration
	known             knownIDs  // the id scan's known ids, decoded
	survivors         survivors // the last scan's persons by e-mail and phone
	currency          string    // the currency setting, for monetary fields
	defs              *fieldDefs
	log               *logrus.Entry
	orgMu             sync.Mutex
	orgs              map[int64]string // organization names read
	// now is the clock that opens read windows.
	now func() time.Time
	// readUp is set by the first read of the process, which reads up to
	// the clock (recent.go).
	readUp atomic.Bool
	// The person webhooks (webhooks.go): off unless the settings have
	// webhooks.
	changehook.Endpoint
	hook hook
	// acts is what activities remember (activities.go).
	acts activityState
}

var (
	_ connector.Source         = (*Source)(nil)
	_ connector.Writer         = (*Source)(nil)
	_ connector.Getter         = (*Source)(nil)
	_ connector.FieldLister    = (*Source)(nil)
	_ connector.QuotaReporter  = (*Source)(nil)
	_ connector.FieldDescriber = (*Source)(nil)
)

// Open opens a pipedrive connector. It makes no call: a bad token shows
// at the first read or write.
func Open(_ context.Context, opts connector.Options) (*Source, error) {
	set, log, err := connector.Prepare[*Settings](opts, TypeName)
	if err != nil {
		return nil, err
	}
	for _, f := range opts.Fields {
		if err := checkField(f); err != nil {
			return nil, fmt.Errorf("open pipedrive connector %s: %w", opts.Name, err)
		}
	}
	baseURL := strings.TrimRight(set.BaseURL, "/")
	token := connector.Secret(strings.TrimSpace(set.APIToken.Reveal()))
	var want []string
	if len(opts.Fields) > 0 {
		want = slices.Clone(opts.Fields)
	}
	s := &Source{
		name: opts.Name,
		c:    newClient(baseURL, token.Reveal(), set.RateLimit, set.TokenBudget, opts.Limiter, remote.Options{Log: log}),
		want: want, pageSize: set.PageSize, currency: strings.TrimSpace(set.Currency), lookback: set.Lookback, deletionsInterval: set.DeletionsInterval, idScanInterval: set.IDScanInterval,
		defs: &fieldDefs{}, log: log, orgs: map[int64]string{}, now: time.Now,
	}
	s.openHook(set.Webhooks)
	return s, nil
}

// checkField refuses a record field the connector cannot have.
func checkField(f string) error {
	if slices.Contains(standardFields, f) || slices.Contains(listFields(), f) {
		return nil
	}
	if key, ok := strings.CutPrefix(f, customPrefix); ok && key != "" {
		return nil
	}
	if list, label, ok := strings.Cut(f, "."); ok && listLabels[list] != nil {
		return fmt.Errorf("field %q: %s has no label %q; use %s.primary or one of %s", f, list, label, list, strings.Join(listLabels[list], ", "))
	}
	return fmt.Errorf("field %q is not a person field: use one of %s, emails.<label>, phones.<label> or custom_fields.<key>", f, strings.Join(standardFields, ", "))
}

// Close releases idle connections.
func (s *Source) Close() error {
	s.c.http.CloseIdleConnections()
	return nil
}

// Quotas returns the allowances the last answers reported.
func (s *Source) Quotas() []connector.Quota { return s.c.limits.quotas() }

// Fields lists the record fields: the standard ones, the labelled lists'
// and every custom field's.
func (s *Source) Fields(ctx context.Context) ([]string, error) {
	if err := s.defs.load(ctx, s.c, s.now()); err != nil {
		return nil, err
	}
	out := append(slices.Clone(standardFields), listFields()...)
	codes, _ := s.defs.custom()
	for _, c := range codes {
		out = append(out, customPrefix+c)
	}
	return out, nil
}

// FieldNames returns the names of the custom fields by record field
// (custom_fields.<key>), for syncd validate.
func (s *Source) FieldNames(ctx context.Context) (map[string]string, error) {
	if err := s.defs.load(ctx, s.c, s.now()); err != nil {
		return nil, err
	}
	codes, names := s.defs.custom()
	out := make(map[string]string, len(codes))
	for _, c := range codes {
		out[customPrefix+c] = names[c]
	}
	return out, nil
}

// wantsOrgName reports whether records carry org_name, which costs a
// read of the organizations.
func (s *Source) wantsOrgName() bool { return s.want == nil || slices.Contains(s.want, fieldOrgName) }

// wantsCustom reports whether records carry custom fields, whose option
// labels need the field definitions.
func (s *Source) wantsCustom() bool {
	return s.want == nil || slices.ContainsFunc(s.want, func(f string) bool { return strings.HasPrefix(f, customPrefix) })
}

// records converts a page of persons, reading the names of the
// organizations not read before and, once, the field definitions.
func (s *Source) records(ctx context.Context, ps []person) ([]connector.Record, error) {
	if s.wantsCustom() && len(ps) > 0 {
		if err := s.defs.load(ctx, s.c, s.now()); err != nil {
			return nil, err
		}
	}
	var orgs map[int64]string
	if s.wantsOrgName() {
		var err error
		if orgs, err = s.orgNames(ctx, ps); err != nil {
			return nil, err
		}
	}
	out := make([]connector.Record, 0, len(ps))
	for _, p := range ps {
		out = append(out, s.record(p, s.defs, orgs))
	}
	return out, nil
}

// orgNames returns the names of the persons' organizations, reading
// those not known yet (100 a call).
func (s *Source) orgNames(ctx context.Context, ps []person) (map[int64]string, error) {
	s.orgMu.Lock()
	var missing []string
	seen := map[int64]bool{}
	for _, p := range ps {
		if p.OrgID == nil || seen[*p.OrgID] {
			continue
		}
		seen[*p.OrgID] = true
		if _, ok := s.orgs[*p.OrgID]; !ok {
			missing = append(missing, strconv.FormatInt(*p.OrgID, 10))
		}
	}
	s.orgMu.Unlock()
	for chunk := range slices.Chunk(missing, 100) {
		var ans struct {
			Data []struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
			} `json:"data"`
		}
		q := url.Values{"ids": {strings.Join(chunk, ",")}}
		if err := s.c.do(ctx, call{method: http.MethodGet, path: "/api/v2/organizations", query: q, route: "GET /api/v2/organizations", idempotent: true}, &ans); err != nil {
			return nil, fmt.Errorf("read organizations: %w", err)
		}
		s.orgMu.Lock()
		if len(s.orgs) > 50000 {
			s.orgs = map[int64]string{}
		}
		for _, o := range ans.Data {
			s.orgs[o.ID] = o.Name
		}
		s.orgMu.Unlock()
	}
	s.orgMu.Lock()
	defer s.orgMu.Unlock()
	out := make(map[int64]string, len(seen))
	for id := range seen {
		if n, ok := s.orgs[id]; ok {
			out[id] = n
		}
	}
	return out, nil
}

// SetClock replaces the clock that opens read windows (tests whose test
// server runs a frozen clock).
func (s *Source) SetClock(now func() time.Time) { s.now = now }
