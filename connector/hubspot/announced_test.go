package hubspot

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

func TestAnnouncedIDs(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"contact events", `[{"subscriptionType":"contact.propertyChange","objectId":12,"propertyName":"lastname"},{"subscriptionType":"contact.creation","objectId":7}]`, []string{"12", "7"}},
		{"other objects left out", `[{"subscriptionType":"company.propertyChange","objectId":3},{"subscriptionType":"deal.creation","objectId":4}]`, nil},
		{"generic object events of contacts", `[{"subscriptionType":"object.propertyChange","objectTypeId":"0-1","objectId":5},{"subscriptionType":"object.creation","objectTypeId":"0-2","objectId":6}]`, []string{"5"}},
		{"not an array of events", `{"objectId":9}`, nil},
		{"no object id", `[{"subscriptionType":"contact.creation"}]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := announced([]byte(tc.body)); !slices.Equal(got, tc.want) {
				t.Errorf("announced %v, want %v", got, tc.want)
			}
		})
	}
}

// The read a webhook starts reads the contacts its events name through
// the batch read endpoint, though search shows their change 10 s late
// (HubSpot's index lag), once; the window does not move for them. A
// delivery that fails the signature announces nothing, and events of
// other objects name no contact.
func TestChangesReadAnnouncedContacts(t *testing.T) {
	const secret, target = "app-secret", "https://syncd.example.com/webhooks/connectors/crm?portal=9"
	f := newFixture(t, hubspotemu.Options{}, func(s *Settings) {
		s.Webhooks = &Webhooks{ClientSecret: Secret(secret), URL: target}
	})
	ids := addAt(f.srv, base,
		map[string]string{"email": "a@example.com", "lastname": "Before"},
		map[string]string{"email": "b@example.com", "lastname": "Before"})
	f.srv.Advance(time.Second)
	cp := f.changes(t, "").checkpoint

	f.srv.SetSearchLag(10 * time.Second)
	for i, v := range []string{"Announced", "Unannounced"} {
		if err := f.srv.Update(ids[i], map[string]string{"lastname": v}); err != nil {
			t.Fatal(err)
		}
	}
	f.srv.Advance(time.Second)
	deliver := func(secret, body string) int {
		ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
		r := httptest.NewRequest(http.MethodPost, "/webhooks/connectors/crm?portal=9", strings.NewReader(body))
		r.Header.Set(TimestampHeader, ts)
		r.Header.Set(SignatureHeader, hubspotemu.SignatureV3(secret, http.MethodPost, target, []byte(body), ts))
		w := httptest.NewRecorder()
		f.src.Webhook().ServeHTTP(w, r)
		return w.Code
	}
	lastNames := func(r read) map[string]string {
		out := map[string]string{}
		for _, rec := range r.records {
			out[rec.ID] = fmt.Sprint(rec.Fields["lastname"])
		}
		return out
	}
	batchReads := func() int { return f.srv.Stats().Requests[hubspotemu.RouteBatchRead] }

	if got := lastNames(f.changes(t, cp)); got[ids[0]] == "Announced" {
		t.Fatalf("a read without webhook read %v: search shows the change at once, the test shows nothing", got)
	}
	body := fmt.Sprintf(`[{"subscriptionType":"contact.propertyChange","objectId":%s,"propertyName":"lastname","propertyValue":"Announced"},{"subscriptionType":"company.propertyChange","objectId":%s}]`, ids[0], ids[1])
	if st := deliver("wrong-secret", body); st != http.StatusUnauthorized {
		t.Fatalf("a forged delivery answered %d, want 401", st)
	}
	before := batchReads()
	if got := lastNames(f.changes(t, cp)); got[ids[0]] == "Announced" || batchReads() != before {
		t.Fatalf("a read after a refused delivery read %v with %d batch reads", got, batchReads()-before)
	}
	if st := deliver(secret, body); st != http.StatusOK {
		t.Fatalf("the delivery answered %d, want 200", st)
	}
	r := f.changes(t, cp)
	got := lastNames(r)
	if got[ids[0]] != "Announced" {
		t.Errorf("the read after the webhook read %v, want %s's change", got, ids[0])
	}
	if _, ok := got[ids[1]]; ok {
		t.Errorf("read %s, named only by a company event", ids[1])
	}
	if r.checkpoint != cp {
		t.Errorf("checkpoint moved from %s to %s for announced contacts", cp, r.checkpoint)
	}
	before = batchReads()
	if got := lastNames(f.changes(t, cp)); got[ids[0]] == "Announced" || batchReads() != before {
		t.Errorf("the next read without webhook read %v again with %d batch reads", got, batchReads()-before)
	}

	// A deletion's event names a contact the batch read no longer
	// returns: the read goes on, and the archived scan reads the deletion.
	if err := f.srv.Archive(ids[1]); err != nil {
		t.Fatal(err)
	}
	if st := deliver(secret, fmt.Sprintf(`[{"subscriptionType":"contact.deletion","objectId":%s}]`, ids[1])); st != http.StatusOK {
		t.Fatalf("the deletion's delivery answered %d, want 200", st)
	}
	r = f.changes(t, cp)
	deleted := false
	for _, rec := range r.records {
		if rec.ID == ids[1] && !rec.Deleted {
			t.Errorf("read %s as live after its deletion", ids[1])
		}
		deleted = deleted || rec.ID == ids[1] && rec.Deleted
	}
	if !deleted {
		t.Errorf("the read after the deletion's webhook read %+v, want %s deleted", r.records, ids[1])
	}
}

// A merge's event may name a contact merged away: its batch read answers
// the merged contact, which comes after the contacts merged into it
// (Deleted, MergedInto set), as in a window, so that their contacts
// move to it instead of a new contact being made; though search shows
// the merge 10 s late.
func TestChangesReadAnnouncedMerge(t *testing.T) {
	const secret, target = "app-secret", "https://syncd.example.com/webhooks/connectors/crm"
	f := newFixture(t, hubspotemu.Options{}, func(s *Settings) {
		s.Webhooks = &Webhooks{ClientSecret: Secret(secret), URL: target}
	})
	ids := addAt(f.srv, base,
		map[string]string{"email": "a@example.com", "lastname": "Primary"},
		map[string]string{"email": "b@example.com", "lastname": "Other"})
	f.srv.Advance(time.Second)
	cp := f.changes(t, "").checkpoint
	f.srv.SetSearchLag(10 * time.Second)
	merged, err := f.srv.Merge(ids[0], ids[1])
	if err != nil {
		t.Fatal(err)
	}
	f.srv.Advance(time.Second)
	body := fmt.Sprintf(`[{"subscriptionType":"contact.merge","objectId":%s}]`, ids[1])
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	r := httptest.NewRequest(http.MethodPost, "/webhooks/connectors/crm", strings.NewReader(body))
	r.Header.Set(TimestampHeader, ts)
	r.Header.Set(SignatureHeader, hubspotemu.SignatureV3(secret, http.MethodPost, target, []byte(body), ts))
	w := httptest.NewRecorder()
	f.src.Webhook().ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("the delivery answered %d", w.Code)
	}
	var order []string
	for _, rec := range f.changes(t, cp).records {
		switch {
		case rec.Deleted && rec.MergedInto == merged:
			order = append(order, "merged away "+rec.ID)
		case rec.ID == merged && !rec.Deleted:
			order = append(order, "merged")
		default:
			order = append(order, fmt.Sprintf("%+v", rec))
		}
	}
	want := []string{"merged away " + ids[0], "merged away " + ids[1], "merged"}
	if merged == ids[0] { // a legacy merge keeps the primary's id
		want = []string{"merged away " + ids[1], "merged"}
	}
	if !slices.Equal(order, want) {
		t.Errorf("read %v, want %v", order, want)
	}
}
