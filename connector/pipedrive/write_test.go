package pipedrive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
	"github.com/syncd-io/syncd/internal/remote"
)

// TestConditionalUpdateMilliseconds: API v2's update_time has
// milliseconds. A write-back conditional on the update_time read is
// applied when the person is unchanged, even when it was read in the
// second it was last edited (the check used to cut the read time to whole
// seconds, so such a write was "changed since read" forever); an edit
// later in that same second is still seen as a change.
func TestConditionalUpdateMilliseconds(t *testing.T) {
	tests := []struct {
		name    string
		editAt  time.Duration // after the read, within the same second; 0: no edit
		changed bool
	}{
		{name: "unchanged, read in the second of its last edit"},
		{name: "edited again 400 ms later, same second", editAt: 400 * time.Millisecond, changed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := pipedriveemu.NewServer(pipedriveemu.Options{})
			t.Cleanup(srv.Close)
			srv.SetClock(base.Add(250 * time.Millisecond))
			id := srv.Add(pipedriveemu.Person{Name: "Ada Lovelace"})
			src := openOn(t, srv, 10, []string{fieldName})
			recs, err := src.Get(context.Background(), []string{id})
			if err != nil || len(recs) != 1 {
				t.Fatalf("get: %v %v", recs, err)
			}
			read := recs[0].UpdatedAt
			if read.Nanosecond() != 250e6 {
				t.Fatalf("update_time read as %s, want its milliseconds (.250)", read.Format(time.RFC3339Nano))
			}
			if tt.editAt > 0 {
				srv.Advance(tt.editAt)
				if err := srv.Edit(id, func(p *pipedriveemu.Person) { p.Name = "Ada King" }); err != nil {
					t.Fatal(err)
				}
			}
			res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: id, Fields: map[string]any{fieldName: "Ada Byron"}, IfUnchangedSince: read}})
			if err != nil {
				t.Fatal(err)
			}
			if got := errors.Is(res[0].Err, connector.ErrChanged); got != tt.changed {
				t.Fatalf("write: %v, want changed=%v", res[0].Err, tt.changed)
			}
			want := "Ada Byron"
			if tt.changed {
				want = "Ada King"
			} else if res[0].Err != nil {
				t.Fatalf("write: %v", res[0].Err)
			}
			if p, _ := srv.Get(id); p.Name != want {
				t.Errorf("name %q, want %q", p.Name, want)
			}
		})
	}
}

// TestMonetaryFields: a monetary custom field is {"value", "currency"} in
// v2. Records carry the amount; a write sends the documented object with
// the person's own currency for the field, or the currency setting when
// it has none, and is refused (naming the field and the setting) when
// neither is known. An amount the person already holds sends nothing.
func TestMonetaryFields(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{CustomFields: []pipedriveemu.CustomField{{Name: "Budget", Type: "monetary"}}})
	t.Cleanup(srv.Close)
	key := srv.CustomFields()[0].Key
	field := customPrefix + key
	usd := srv.Add(pipedriveemu.Person{Name: "Ada", Custom: map[string]any{key: pipedriveemu.Money{Value: 1200, Currency: "USD"}}})
	none := srv.Add(pipedriveemu.Person{Name: "Alan"})
	tests := []struct {
		name     string
		currency string // the setting
		id       string
		amount   any
		want     pipedriveemu.Money
		refused  bool
	}{
		{name: "the person's currency is kept", currency: "EUR", id: usd, amount: "4321", want: pipedriveemu.Money{Value: 4321, Currency: "USD"}},
		{name: "the setting's currency for a person without one", currency: "EUR", id: none, amount: int64(50), want: pipedriveemu.Money{Value: 50, Currency: "EUR"}},
		{name: "no currency known", id: none, amount: 7.5, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.refused {
				srv.Edit(none, func(p *pipedriveemu.Person) { p.Custom = nil })
			}
			src := openWith(t, srv, func(s *Settings) { s.Currency = tt.currency })
			src.want = []string{fieldName, field}
			res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: tt.id, Fields: map[string]any{field: tt.amount}}})
			if err != nil {
				t.Fatal(err)
			}
			if tt.refused {
				var re *connector.RefusedError
				if !errors.As(res[0].Err, &re) || re.Field != field || !strings.Contains(re.Reason, "currency setting") {
					t.Fatalf("write without a currency: %v, want a refusal naming %s and the currency setting", res[0].Err, field)
				}
				return
			}
			if res[0].Err != nil {
				t.Fatalf("write: %v", res[0].Err)
			}
			p, _ := srv.Get(tt.id)
			if p.Custom[key] != tt.want {
				t.Errorf("stored %#v, want %#v", p.Custom[key], tt.want)
			}
			recs, err := src.Get(context.Background(), []string{tt.id})
			if err != nil || len(recs) != 1 || recs[0].Fields[field] != int64(tt.want.Value) {
				t.Errorf("read back %v %v, want the amount %v", recs, err, tt.want.Value)
			}
			patches := srv.Stats().Requests[pipedriveemu.RouteUpdatePerson]
			if res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: tt.id, Fields: map[string]any{field: tt.amount}}}); err != nil || res[0].Err != nil {
				t.Fatalf("repeat: %v %v", err, res)
			}
			if n := srv.Stats().Requests[pipedriveemu.RouteUpdatePerson] - patches; n != 0 {
				t.Errorf("repeating the amount sent %d PATCHes, want none", n)
			}
		})
	}
}

// TestDefiniteRefusals: a change Pipedrive refuses with a definite answer
// (a 400 validation error, a 403 in Pipedrive's body) is the change's own
// *connector.RefusedError naming Pipedrive's message, sent once; a 404
// is ErrNotFound; a 429 or a 5xx is not the change's: the call is tried
// again and the change applied.
func TestDefiniteRefusals(t *testing.T) {
	tests := []struct {
		name     string
		fault    *pipedriveemu.Fault
		fields   map[string]any
		refused  string // Pipedrive's message the refusal names
		notFound bool
		sent     int // PATCH requests
	}{
		{name: "a validation error of the data", fields: map[string]any{fieldOrgID: "99"}, refused: "organization 99 not found", sent: 1},
		{name: "an injected 400", fault: &pipedriveemu.Fault{Status: http.StatusBadRequest}, refused: "Bad Request", sent: 1},
		{name: "a 403 in Pipedrive's body", fault: &pipedriveemu.Fault{Status: http.StatusForbidden}, refused: "Forbidden", sent: 1},
		{name: "a 429 is tried again", fault: &pipedriveemu.Fault{Status: http.StatusTooManyRequests}, sent: 2},
		{name: "a 502 is tried again", fault: &pipedriveemu.Fault{Status: http.StatusBadGateway}, sent: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := pipedriveemu.NewServer(pipedriveemu.Options{})
			t.Cleanup(srv.Close)
			id := srv.Add(pipedriveemu.Person{Name: "Ada"})
			src := openWith(t, srv, func(*Settings) {})
			if tt.fault != nil {
				srv.Inject(pipedriveemu.RouteUpdatePerson, *tt.fault)
			}
			fields := tt.fields
			if fields == nil {
				fields = map[string]any{fieldName: "Ada Byron"}
			}
			res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: id, Fields: fields}})
			if err != nil {
				t.Fatalf("the whole write failed: %v", err)
			}
			var re *connector.RefusedError
			switch {
			case tt.refused != "":
				if !errors.As(res[0].Err, &re) || !errors.Is(res[0].Err, connector.ErrRefused) || !strings.Contains(re.Reason, tt.refused) || !strings.Contains(res[0].Err.Error(), tt.refused) {
					t.Errorf("result %v, want a RefusedError naming %q", res[0].Err, tt.refused)
				}
			case res[0].Err != nil:
				t.Errorf("result %v, want the change applied after the retry", res[0].Err)
			}
			if n := srv.Stats().Requests[pipedriveemu.RouteUpdatePerson]; n != tt.sent {
				t.Errorf("%d PATCHes, want %d", n, tt.sent)
			}
		})
	}
}

// TestOrganizationRefusal: a refused organization create (org_name) is
// the change's own refusal naming org_name, not a failure of the whole
// write that would be tried again.
func TestOrganizationRefusal(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	id := srv.Add(pipedriveemu.Person{Name: "Ada"})
	other := srv.Add(pipedriveemu.Person{Name: "Alan"})
	srv.Inject(pipedriveemu.RouteAddOrg, pipedriveemu.Fault{Status: http.StatusBadRequest})
	src := openWith(t, srv, func(*Settings) {})
	res, err := src.Write(context.Background(), []connector.Change{
		{Op: connector.OpUpdate, ID: id, Fields: map[string]any{fieldOrgName: "Refused Ltd"}},
		{Op: connector.OpUpdate, ID: other, Fields: map[string]any{fieldName: "Alan Turing"}},
	})
	if err != nil {
		t.Fatalf("the whole write failed: %v", err)
	}
	var re *connector.RefusedError
	if !errors.As(res[0].Err, &re) || re.Field != fieldOrgName || re.Code != "400" {
		t.Errorf("result %v, want a RefusedError of org_name, code 400", res[0].Err)
	}
	if res[1].Err != nil {
		t.Errorf("the other change: %v", res[1].Err)
	}
}

// TestSearchLimitIsNotTheDailyBudget: 20 organizations named in one
// write-back (20 searches) keep under the Search API's own limit of 10
// per 2 s and all succeed; the search answers' window (limit 10) does not
// lower the token's burst limiter; and a search's 429, whatever its
// headers, waits rather than stopping the pass for the day.
func TestSearchLimitIsNotTheDailyBudget(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{BurstLimit: 100, DailyTokens: 1 << 20, Token: "search-token"})
	t.Cleanup(srv.Close)
	var changes []connector.Change
	for i := range 20 {
		id := srv.Add(pipedriveemu.Person{Name: fmt.Sprint("P", i)})
		changes = append(changes, connector.Change{Op: connector.OpUpdate, ID: id, Fields: map[string]any{fieldOrgName: fmt.Sprint("Org ", i)}})
	}
	src := openWith(t, srv, func(s *Settings) { s.RateLimit = 100 })
	start := time.Now()
	res, err := src.Write(context.Background(), changes)
	if err != nil {
		t.Fatalf("write: %v", err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Errorf("change %d: %v", i, r.Err)
		}
	}
	st := srv.Stats()
	t.Logf("20 searches in %s, %d answered 429", time.Since(start).Round(time.Millisecond), st.Responses[pipedriveemu.RouteSearchOrgs][http.StatusTooManyRequests])
	if n := st.Responses[pipedriveemu.RouteSearchOrgs][http.StatusTooManyRequests]; n > 2 {
		t.Errorf("%d searches answered 429, want the connector to keep to the search limit", n)
	}
	if got, _ := bucket(100); src.c.limits.limiter.Limit() != got {
		t.Errorf("the token's limiter is at %v after searches, want %v: the search window lowered it", src.c.limits.limiter.Limit(), got)
	}

	h := http.Header{}
	h.Set("x-ratelimit-limit", "100")
	h.Set("x-ratelimit-remaining", "57") // the other window's figures
	h.Set("x-ratelimit-reset", "1")
	for _, route := range []string{"GET /api/v2/organizations/search", "GET /api/v2/persons"} {
		v := judge(answerOf(route, h))
		daily := errors.Is(v.Err, ErrDailyBudget)
		if wantDaily := !isSearch(route); daily != wantDaily {
			t.Errorf("429 of %s with a window not spent: daily budget %v, want %v", route, daily, wantDaily)
		}
	}
}

func answerOf(route string, h http.Header) remote.Answer {
	return remote.Answer{Method: http.MethodGet, Route: route, Status: http.StatusTooManyRequests, Header: h,
		Body: []byte(`{"success":false,"error":"Request over limit"}`)}
}
