package activity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// Catch-up: nothing lost while syncd was down.
//
// The workspace retries a delivery for a while; what it gave up on shows
// as a failed delivery in the subscription's history. The listings of
// calls and texts are narrow (one workspace number and one participant
// per query), so listing every contact's number on every pass would cost
// a query per contact. Catch-up therefore does two cheap things:
//
//  1. it reads the subscription's delivery history (one call) and asks
//     the service to deliver again each failed call or message event
//     (one call each): these come back through the receiver like any
//     delivery, whatever number they are about;
//  2. it lists, from its last position (less an overlap), the calls and
//     texts of the (workspace number, participant) pairs that had
//     activity in the last Lookback (kept in state as events are
//     handled), and queues what no delivery brought, with the call's
//     summary, transcript and recording when a connector logs them.
//
// A pass costs one history read, one retry per failed delivery and one
// or two listings per recently active pair: it grows with recent
// activity, not with the number of contacts. A call from a number with
// no activity in Lookback whose deliveries were all lost, and dropped
// from the history, is not found.

// Workspace is what catch-up reads of the workspace; *workspace.Client
// implements it.
type Workspace interface {
	ListWebhooks(ctx context.Context) ([]workspace.Webhook, error)
	WebhookDeliveries(ctx context.Context, id string) ([]workspace.Delivery, error)
	RetryDelivery(ctx context.Context, webhookID, eventID string) error
	ListCalls(ctx context.Context, p workspace.ActivityPageParams) (workspace.CallPage, error)
	ListMessages(ctx context.Context, p workspace.ActivityPageParams) (workspace.MessagePage, error)
	CallSummary(ctx context.Context, callID string) (workspace.CallSummary, error)
	CallTranscript(ctx context.Context, callID string) (workspace.CallTranscript, error)
	CallRecordings(ctx context.Context, callID string) ([]workspace.CallRecording, error)
	// User reads a workspace user, for the owner's e-mail (owner.go).
	User(ctx context.Context, id string) (workspace.User, error)
}

var _ Workspace = (*workspace.Client)(nil)

// Defaults of catch-up.
const (
	DefaultLookback     = 7 * 24 * time.Hour
	DefaultCatchUpEvery = 5 * time.Minute
	// catchUpOverlap is listed again before the last position: a call
	// created just before a pass may be listed only after it.
	catchUpOverlap = 2 * time.Minute
	positionKey    = "listings"
	catchUpPrefix  = "catchup:"
)

// CatchUpStats says what a catch-up pass did.
type CatchUpStats struct {
	Retried  int // failed deliveries the service was asked to deliver again
	Listings int // listing queries made
	Queued   int // calls, texts and their parts queued from listings
}

// CatchUp runs one catch-up pass (see above).
func (l *Logger) CatchUp(ctx context.Context) (CatchUpStats, error) {
	var st CatchUpStats
	ws := l.opts.Workspace
	if ws == nil {
		return st, nil
	}
	var errs []error
	if l.opts.WebhookURL != "" {
		n, err := l.retryFailed(ctx)
		st.Retried = n
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := l.listRecent(ctx, &st); err != nil {
		errs = append(errs, err)
	}
	if st.Queued > 0 {
		l.Notify()
	}
	return st, errors.Join(errs...)
}

// retryFailed asks for each failed call or message delivery again.
func (l *Logger) retryFailed(ctx context.Context) (int, error) {
	ws := l.opts.Workspace
	whs, err := ws.ListWebhooks(ctx)
	if err != nil {
		return 0, fmt.Errorf("catch up: %w", err)
	}
	n := 0
	for _, wh := range whs {
		if wh.URL != l.opts.WebhookURL {
			continue
		}
		ds, err := ws.WebhookDeliveries(ctx, wh.ID)
		if err != nil {
			return n, fmt.Errorf("catch up: %w", err)
		}
		for _, d := range ds {
			if d.Status != "failed" || !slices.Contains(workspace.ActivityEvents, d.Type) {
				continue
			}
			if err := ws.RetryDelivery(ctx, wh.ID, d.EventID); err != nil {
				return n, fmt.Errorf("catch up: %w", err)
			}
			n++
		}
	}
	return n, nil
}

// pair is a workspace number and a participant with recent activity.
type pair struct {
	PhoneNumberID, Number string
}

// listRecent lists the calls and texts of the recently active pairs
// since the last position and queues those not known yet.
func (l *Logger) listRecent(ctx context.Context, st *CatchUpStats) error {
	q := l.opts.Queue
	started := l.opts.Now()
	var since time.Time
	if raw, err := q.Position(positionKey); err != nil {
		return err
	} else if len(raw) > 0 {
		if err := since.UnmarshalText(raw); err != nil {
			return fmt.Errorf("catch up: position: %w", err)
		}
		since = since.Add(-catchUpOverlap)
	}
	pairs, err := l.recentPairs(started.Add(-l.opts.Lookback))
	if err != nil {
		return err
	}
	calls, texts := l.logsAny(policy.LogCalls), l.logsAny(policy.LogMessages)
	for _, p := range pairs {
		params := workspace.ActivityPageParams{PhoneNumberID: p.PhoneNumberID, Participant: p.Number, CreatedAfter: since, MaxResults: workspace.MaxActivityPageSize}
		if calls {
			if err := l.listCalls(ctx, params, st); err != nil {
				return err
			}
		}
		if texts {
			if err := l.listTexts(ctx, params, st); err != nil {
				return err
			}
		}
	}
	pos, _ := started.UTC().MarshalText()
	return q.SetPosition(positionKey, pos)
}

func (l *Logger) listCalls(ctx context.Context, p workspace.ActivityPageParams, st *CatchUpStats) error {
	for {
		page, err := l.opts.Workspace.ListCalls(ctx, p)
		st.Listings++
		if err != nil {
			return fmt.Errorf("catch up: %w", err)
		}
		for _, c := range page.Data {
			if err := l.queueCall(ctx, c, st); err != nil {
				return err
			}
		}
		if page.NextPageToken == nil || *page.NextPageToken == "" {
			return nil
		}
		p.PageToken = *page.NextPageToken
	}
}

func (l *Logger) listTexts(ctx context.Context, p workspace.ActivityPageParams, st *CatchUpStats) error {
	for {
		page, err := l.opts.Workspace.ListMessages(ctx, p)
		st.Listings++
		if err != nil {
			return fmt.Errorf("catch up: %w", err)
		}
		for _, m := range page.Data {
			// A text already handled (from its delivery or an earlier
			// pass) is not queued again, as calls are not (queueCall).
			it, err := l.loadItem(connector.ActivityMessage, m.ID)
			if err != nil {
				return err
			}
			if it.Message != nil {
				continue
			}
			typ := workspace.EventMessageReceived
			if m.Direction == workspace.Outgoing {
				typ = workspace.EventMessageDelivered
			}
			if err := l.queueFound(typ, m.ID, m, st); err != nil {
				return err
			}
		}
		if page.NextPageToken == nil || *page.NextPageToken == "" {
			return nil
		}
		p.PageToken = *page.NextPageToken
	}
}

// queueCall queues a listed call, and its summary, transcript and
// recording when a connector logs them and the item lacks them.
func (l *Logger) queueCall(ctx context.Context, c workspace.Call, st *CatchUpStats) error {
	it, err := l.loadItem(connector.ActivityCall, c.ID)
	if err != nil {
		return err
	}
	if it.Call == nil {
		if err := l.queueFound(workspace.EventCallCompleted, c.ID, c, st); err != nil {
			return err
		}
	}
	ws := l.opts.Workspace
	if it.Summary == nil && l.logsAny(policy.LogSummaries) {
		s, err := ws.CallSummary(ctx, c.ID)
		if err == nil && s.Status == "completed" {
			err = l.queueFound(workspace.EventCallSummaryCompleted, c.ID, s, st)
		}
		if err != nil && !workspace.IsNotFound(err) {
			return err
		}
	}
	if it.Transcript == nil && l.logsAny(policy.LogTranscripts) {
		t, err := ws.CallTranscript(ctx, c.ID)
		if err == nil && t.Status == "completed" {
			err = l.queueFound(workspace.EventCallTranscriptCompleted, c.ID, t, st)
		}
		if err != nil && !workspace.IsNotFound(err) {
			return err
		}
	}
	if it.RecordingURL == "" && l.logsAny(policy.LogRecordings) {
		rs, err := ws.CallRecordings(ctx, c.ID)
		if err == nil && len(rs) > 0 {
			withMedia := c
			for _, r := range rs {
				withMedia.Media = append(withMedia.Media, workspace.CallMedia{URL: r.URL, Type: r.Type, Duration: int(r.Duration)})
			}
			err = l.queueFound(workspace.EventCallRecordingCompleted, c.ID, withMedia, st)
		}
		if err != nil && !workspace.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// queueFound queues resource as an event of typ, under an id made of
// the type and the resource's id: queued once however often catch-up
// finds it (the seen ids), and harmless beside its delivery (the item
// merges it again, the write finds the value written).
func (l *Logger) queueFound(typ, id string, resource any, st *CatchUpStats) error {
	raw, err := json.Marshal(resource)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"id": catchUpPrefix + id, "object": workspace.EventObject, "type": typ,
		"data": workspace.EventData{Object: raw}})
	if err != nil {
		return err
	}
	_, dup, err := l.opts.Queue.Enqueue(state.ActivityEvent{ID: catchUpPrefix + typ + ":" + id, Type: typ, Body: body})
	if err != nil {
		return err
	}
	if !dup {
		st.Queued++
		l.log.WithField(logfield.Type, typ).WithField(logfield.Key, id).Debug("activity found by catch-up")
	}
	return nil
}

// logsAny reports whether a target logs k.
func (l *Logger) logsAny(k policy.ActivityLog) bool {
	for _, t := range l.opts.Targets {
		if t.logs(k) {
			return true
		}
	}
	return false
}

// recentPairs returns the pairs with activity after since.
func (l *Logger) recentPairs(since time.Time) ([]pair, error) {
	raw, err := l.opts.Queue.Pairs(since)
	if err != nil {
		return nil, err
	}
	out := make([]pair, 0, len(raw))
	for _, k := range raw {
		pn, num, ok := strings.Cut(k, "\x00")
		if ok {
			out = append(out, pair{PhoneNumberID: pn, Number: num})
		}
	}
	return out, nil
}

// touchPairs records the item's pairs as active at its time.
func (l *Logger) touchPairs(it *Item) error {
	var pn string
	var at time.Time
	switch {
	case it.Call != nil:
		pn, at = it.Call.PhoneNumberID, it.Call.CreatedAt
	case it.Message != nil:
		pn, at = it.Message.PhoneNumberID, it.Message.CreatedAt
	}
	if pn == "" {
		return nil
	}
	for _, n := range it.numbers() {
		if err := l.opts.Queue.TouchPair(pn+"\x00"+n, at); err != nil {
			return err
		}
	}
	return nil
}
