package salesforce

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/internal/remote"
)

// openOn opens a connector on a test org, its read windows on the org's
// clock and its waits recorded instead of slept.
func openOn(t *testing.T, org *salesforceemu.Server, mod func(*Settings), fields ...string) (*Source, *[]time.Duration) {
	t.Helper()
	set := NewSettings()
	set.LoginURL = org.LoginURL
	set.ClientID, set.ClientSecret = Secret(org.ClientID()), Secret(org.ClientSecret())
	set.RateLimit, set.Settle = 100000, 0
	if mod != nil {
		mod(set)
	}
	if len(fields) == 0 {
		fields = []string{"FirstName", "LastName", "Email", "Title"}
	}
	s, err := Open(context.Background(), connector.Options{Name: "t", Settings: set, Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.now = org.Now
	var waits []time.Duration
	s.c.sleep = func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return ctx.Err() }
	s.c.auth.sleep = s.c.sleep
	return s, &waits
}

func readAll(t *testing.T, s *Source, cp string) ([]connector.Record, string, error) {
	t.Helper()
	var recs []connector.Record
	err := s.Changes(context.Background(), cp, func(_ context.Context, b connector.Batch) error {
		recs = append(recs, b.Records...)
		cp = b.Checkpoint
		return nil
	})
	return recs, cp, err
}

func TestJWTBearerFlowAndInstanceURL(t *testing.T) {
	key, pemKey := testKey(t)
	org := salesforceemu.NewServer(salesforceemu.Options{JWTUsername: "sync@acme.com", JWTKey: &key.PublicKey})
	t.Cleanup(org.Close)
	org.Add("Contact", map[string]any{"LastName": "Lovelace"})
	org.Advance(time.Second)
	s, _ := openOn(t, org, func(set *Settings) {
		set.ClientSecret, set.Username, set.PrivateKey = "", "sync@acme.com", Secret(pemKey)
	})
	recs, _, err := readAll(t, s, "")
	if err != nil || len(recs) != 1 || recs[0].Fields["LastName"] != "Lovelace" {
		t.Fatalf("read %v, %v", recs, err)
	}
	if org.TokenCalls() != 1 || org.Stats().Requests[salesforceemu.RouteQueryAll] != 1 {
		t.Errorf("%d token calls, %+v", org.TokenCalls(), org.Stats().Requests)
	}

	// Another user's assertion is refused at the token endpoint.
	s2, _ := openOn(t, org, func(set *Settings) {
		set.ClientSecret, set.Username, set.PrivateKey = "", "intruder@acme.com", Secret(pemKey)
	})
	_, _, err = readAll(t, s2, "")
	var te *TokenError
	if !errors.As(err, &te) || te.Code != "invalid_grant" {
		t.Errorf("read as another user: %v, want invalid_grant", err)
	}
}

func TestBadClientSecretIsNotRetried(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	s, _ := openOn(t, org, func(set *Settings) { set.ClientSecret = "wrong" })
	_, _, err := readAll(t, s, "")
	var te *TokenError
	if !errors.As(err, &te) || te.Code != "invalid_client" || org.Stats().Requests[salesforceemu.RouteToken] != 1 {
		t.Fatalf("read with a wrong secret: %v after %d token requests", err, org.Stats().Requests[salesforceemu.RouteToken])
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error shows the secret: %v", err)
	}
}

func TestExpiredSessionRenewsOnce(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{SessionCalls: 2})
	t.Cleanup(org.Close)
	for i := range 450 {
		org.Add("Contact", map[string]any{"LastName": fmt.Sprint("L", i)})
	}
	org.Advance(time.Second)
	s, _ := openOn(t, org, func(set *Settings) { set.PageSize = 200 })
	recs, _, err := readAll(t, s, "")
	if err != nil || len(recs) != 450 {
		t.Fatalf("read %d, %v", len(recs), err)
	}
	// 3 pages on sessions of 2 calls: one renewal.
	if org.TokenCalls() != 2 {
		t.Errorf("%d token calls for 3 pages on 2-call sessions, want 2", org.TokenCalls())
	}
}

func TestDailyBudgetStopsReadsAndWrites(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{DailyLimit: 1000, Used: 499})
	t.Cleanup(org.Close)
	for i := range 600 {
		org.Add("Contact", map[string]any{"LastName": fmt.Sprint("L", i)})
	}
	org.Advance(time.Second)
	s, _ := openOn(t, org, func(set *Settings) { set.PageSize = 200 })
	recs, cp, err := readAll(t, s, "")
	if !errors.Is(err, connector.ErrBudgetSpent) || len(recs) != 200 || cp == "" {
		t.Fatalf("read at the budget: %d records, %v; want one page, then ErrBudgetSpent", len(recs), err)
	}
	q := s.Quotas()
	if len(q) != 1 || q[0].Used != 500 || q[0].Limit != 1000 || q[0].Budget != 0.5 {
		t.Errorf("quotas %+v", q)
	}
	_, err = s.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: recs[0].ID, Fields: map[string]any{"LastName": "x"}}})
	if !errors.Is(err, connector.ErrBudgetSpent) || org.Used() != 500 {
		t.Errorf("write over the budget: %v (org usage %d)", err, org.Used())
	}
	// The org's whole allowance spent: REQUEST_LIMIT_EXCEEDED ends the
	// read the same way.
	org.SetUsed(1000)
	s2, _ := openOn(t, org, func(set *Settings) { set.DailyBudget = 1 })
	if _, _, err := readAll(t, s2, ""); !errors.Is(err, ErrDailyLimit) || !errors.Is(err, connector.ErrBudgetSpent) {
		t.Errorf("read over the org's limit: %v", err)
	}
}

func TestWriteRefusalsNameTheField(t *testing.T) {
	rule := salesforceemu.ValidationRule{Name: "No_CEO", Field: "Title", Message: "Title may not be CEO",
		Refuse: func(r map[string]any) bool { return r["Title"] == "CEO" }}
	org := salesforceemu.NewServer(salesforceemu.Options{ValidationRules: []salesforceemu.ValidationRule{rule}})
	t.Cleanup(org.Close)
	a := org.Add("Contact", map[string]any{"LastName": "A"})
	b := org.Add("Contact", map[string]any{"LastName": "B"})
	s, waits := openOn(t, org, nil)
	org.LockRecord(b, 2)
	res, err := s.Write(context.Background(), []connector.Change{
		{Op: connector.OpUpdate, ID: a, Fields: map[string]any{"Title": "CEO"}},
		{Op: connector.OpUpdate, ID: b, Fields: map[string]any{"Title": "CTO"}},
		{Op: connector.OpCreate, Fields: map[string]any{"FirstName": "No", "Email": "no@example.com"}},
		{Op: connector.OpCreate, Fields: map[string]any{"LastName": "New", "Nickname": "x"}},
		{Op: connector.OpCreate, Fields: map[string]any{"LastName": "New"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var re *RecordError
	if !errors.As(res[0].Err, &re) || re.Code != "FIELD_CUSTOM_VALIDATION_EXCEPTION" || re.Field() != "Title" || re.HTTPStatus() != http.StatusBadRequest {
		t.Errorf("validation rule: %v", res[0].Err)
	}
	if res[1].Err != nil || len(*waits) != 2 {
		t.Errorf("locked record: %v after %d waits, want written after 2", res[1].Err, len(*waits))
	}
	if !errors.As(res[2].Err, &re) || !errors.Is(res[2].Err, ErrRequiredField) || re.Field() != "LastName" || !strings.Contains(re.Error(), "map a workspace field to LastName") {
		t.Errorf("create without LastName: %v", res[2].Err)
	}
	if !errors.As(res[3].Err, &re) || re.Field() != "Nickname" {
		t.Errorf("create with an unknown field: %v", res[3].Err)
	}
	if res[4].Err != nil || res[4].ID == "" {
		t.Errorf("valid create: %+v", res[4])
	}
	st := org.Stats()
	if st.Requests[salesforceemu.RouteCreate] != 1 || st.Requests[salesforceemu.RouteUpdate] != 3 {
		t.Errorf("calls %+v, want 1 create (the others refused before sending) and 3 updates (2 of them for the lock)", st.Requests)
	}
	if r, _ := org.Get(b); r.Fields["Title"] != "CTO" {
		t.Errorf("locked record after the write: %v", r.Fields)
	}
}

func TestConditionalUpdateAndMissingRecords(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	a := org.Add("Contact", map[string]any{"LastName": "A"})
	org.Advance(time.Second)
	s, _ := openOn(t, org, nil)
	recs, err := s.Get(context.Background(), []string{a, "nonsense"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("Get: %v, %v", recs, err)
	}
	org.Advance(time.Second)
	if err := org.Update(a, map[string]any{"Title": "edited meanwhile"}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Write(context.Background(), []connector.Change{
		{Op: connector.OpUpdate, ID: a, Fields: map[string]any{"Title": "ours"}, IfUnchangedSince: recs[0].UpdatedAt},
		{Op: connector.OpDelete, ID: salesforceemu.MakeID("0035g0000ZZZZZZ")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(res[0].Err, connector.ErrChanged) {
		t.Errorf("update of a record changed since it was read: %v", res[0].Err)
	}
	if !errors.Is(res[1].Err, connector.ErrNotFound) {
		t.Errorf("delete of a missing record: %v", res[1].Err)
	}
	if r, _ := org.Get(a); r.Fields["Title"] != "edited meanwhile" {
		t.Errorf("the conditional update overwrote %v", r.Fields)
	}
}

func TestPurgedDeletionsComeFromGetDeleted(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	a := org.Add("Contact", map[string]any{"LastName": "A"})
	b := org.Add("Contact", map[string]any{"LastName": "B"})
	org.Advance(time.Second)
	s, _ := openOn(t, org, nil)
	_, cp, err := readAll(t, s, "")
	if err != nil {
		t.Fatal(err)
	}
	org.Advance(10 * time.Second)
	_ = org.Delete(a)
	_ = org.Delete(b)
	org.EmptyRecycleBin(org.Now().Add(time.Second), false) // both purged before a read
	org.Advance(2 * time.Minute)
	recs, _, err := readAll(t, s, cp)
	if err != nil || len(recs) != 2 || !recs[0].Deleted || !recs[1].Deleted {
		t.Fatalf("read after purged deletions: %+v, %v", recs, err)
	}
	if n := org.Stats().Requests[salesforceemu.RouteDeleted]; n != 1 {
		t.Errorf("%d getDeleted calls, want 1", n)
	}
}

// TestJudge checks Salesforce's rules for the request loop.
func TestJudge(t *testing.T) {
	body := func(code string) []byte { return []byte(`[{"message":"m","errorCode":"` + code + `"}]`) }
	for _, tc := range []struct {
		name   string
		status int
		body   []byte
		want   remote.Action
	}{
		{"expired session", 401, body("INVALID_SESSION_ID"), remote.Renew},
		{"daily limit", 403, body("REQUEST_LIMIT_EXCEEDED"), remote.Fail},
		{"lock", 400, body("UNABLE_TO_LOCK_ROW"), remote.Wait},
		{"busy", 503, []byte("<html>"), remote.Retry},
		{"bad query", 400, body("MALFORMED_QUERY"), remote.Fail},
	} {
		v := judge(remote.Answer{Status: tc.status, Body: tc.body, Header: http.Header{}, Route: "GET /query"})
		if v.Action != tc.want || v.Err == nil {
			t.Errorf("%s: %+v, want action %v", tc.name, v, tc.want)
		}
	}
}

// TestLeadsNeedCompany syncs Leads: a Lead needs Company and LastName,
// and Status is defaulted by Salesforce.
func TestLeadsNeedCompany(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	org.Add("Lead", map[string]any{"LastName": "Hopper", "Company": "Navy"})
	org.Advance(time.Second)
	s, _ := openOn(t, org, func(set *Settings) { set.Object = "lead" }, "LastName", "Company", "Email")
	recs, _, err := readAll(t, s, "")
	if err != nil || len(recs) != 1 || recs[0].Fields["Company"] != "Navy" || s.Object() != "Lead" {
		t.Fatalf("read Leads: %v, %v", recs, err)
	}
	res, err := s.Write(context.Background(), []connector.Change{
		{Op: connector.OpCreate, Fields: map[string]any{"LastName": "Liskov"}},
		{Op: connector.OpCreate, Fields: map[string]any{"LastName": "Liskov", "Company": "MIT"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var re *RecordError
	if !errors.As(res[0].Err, &re) || re.Field() != "Company" || !errors.Is(res[0].Err, connector.ErrRefused) {
		t.Errorf("Lead without Company: %v", res[0].Err)
	}
	if res[1].Err != nil {
		t.Fatalf("Lead with Company: %v", res[1].Err)
	}
	if r, _ := org.Get(res[1].ID); r.Fields["Status"] != "Open - Not Contacted" {
		t.Errorf("created Lead %v, want Salesforce's default Status", r.Fields)
	}
}

// TestCreatesAfterExpiryAreSentOnce expires the session before a create
// call: the 401 refused it unapplied, so the call is repeated after one
// token call, and each record exists once.
func TestCreatesAfterExpiryAreSentOnce(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	s, _ := openOn(t, org, nil)
	if _, err := s.Fields(context.Background()); err != nil { // the first token, and the describe
		t.Fatal(err)
	}
	org.ExpireSessions()
	res, err := s.Write(context.Background(), []connector.Change{
		{Op: connector.OpCreate, Fields: map[string]any{"LastName": "One"}},
		{Op: connector.OpCreate, Fields: map[string]any{"LastName": "Two"}},
	})
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("creates after the expiry: %+v, %v", res, err)
	}
	st := org.Stats()
	if org.TokenCalls() != 2 || st.Responses[salesforceemu.RouteCreate][401] != 1 || st.Responses[salesforceemu.RouteCreate][200] != 1 {
		t.Errorf("%d token calls, create answers %v; want 2 tokens, one 401 then one 200", org.TokenCalls(), st.Responses[salesforceemu.RouteCreate])
	}
	if n := len(org.Records("Contact")); n != 2 {
		t.Errorf("%d Contacts, want the 2 created once", n)
	}
}

// TestSettleReadsEachChangeOnce reads with the default settle time: a
// change younger than a minute waits for a later pass, and passes read
// every change exactly once.
func TestSettleReadsEachChangeOnce(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	s, _ := openOn(t, org, func(set *Settings) { set.Settle = DefaultSettle })
	a := org.Add("Contact", map[string]any{"LastName": "A"})
	org.Advance(30 * time.Second)
	recs, cp, err := readAll(t, s, "")
	if err != nil || len(recs) != 0 {
		t.Fatalf("a pass 30 s after the change read %d records, %v; want none yet", len(recs), err)
	}
	org.Advance(40 * time.Second)
	b := org.Add("Contact", map[string]any{"LastName": "B"})
	recs, cp, err = readAll(t, s, cp)
	if err != nil || len(recs) != 1 || recs[0].ID != a {
		t.Fatalf("a pass 70 s after the first change read %v, %v; want only it", recs, err)
	}
	org.Advance(2 * time.Minute)
	recs, _, err = readAll(t, s, cp)
	if err != nil || len(recs) != 1 || recs[0].ID != b {
		t.Fatalf("the next pass read %v, %v; want only the second change", recs, err)
	}
	for id, n := range org.ReadCounts() {
		if n != 1 {
			t.Errorf("record %s read %d times", id, n)
		}
	}
}

// TestResumedWindowCloses stops a read after its first page, then every
// record left in the window changes (leaving it): the resumed read finds
// nothing in the window, yet closes it, so that later changes are read.
func TestResumedWindowCloses(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	var ids []string
	for i := range 300 {
		ids = append(ids, org.Add("Contact", map[string]any{"LastName": fmt.Sprint("L", i)}))
	}
	org.Advance(time.Second)
	s, _ := openOn(t, org, func(set *Settings) { set.PageSize = 200 })
	stop := errors.New("stop")
	var cp string
	err := s.Changes(context.Background(), "", func(_ context.Context, b connector.Batch) error { cp = b.Checkpoint; return stop })
	if !errors.Is(err, stop) {
		t.Fatal(err)
	}
	for _, id := range ids[200:] {
		_ = org.Update(id, map[string]any{"Title": "moved on"})
	}
	org.Advance(time.Second)
	recs, cp, err := readAll(t, s, cp)
	if err != nil || len(recs) != 0 {
		t.Fatalf("resumed read: %d records, %v; want none (they left the window)", len(recs), err)
	}
	recs, _, err = readAll(t, s, cp)
	if err != nil || len(recs) != 100 {
		t.Fatalf("the next read: %d records, %v; want the 100 changed ones", len(recs), err)
	}
}

// TestExpiredLocatorQueriesAgain lets the query locator expire between
// two pages (API 55.0, whose locators live 15 minutes unused, and a batch
// that took longer to record): the read queries again from the last
// record and reads each record once.
func TestExpiredLocatorQueriesAgain(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	for i := range 500 {
		org.Add("Contact", map[string]any{"LastName": fmt.Sprint("L", i)})
	}
	org.Advance(time.Second)
	s, _ := openOn(t, org, func(set *Settings) { set.PageSize, set.APIVersion = 200, "55.0" })
	n := 0
	err := s.Changes(context.Background(), "", func(_ context.Context, b connector.Batch) error {
		n += len(b.Records)
		if n == 200 {
			org.Advance(16 * time.Minute) // a slow batch
		}
		return nil
	})
	if err != nil || n != 500 {
		t.Fatalf("read %d records, %v", n, err)
	}
	for id, c := range org.ReadCounts() {
		if c != 1 {
			t.Errorf("record %s read %d times", id, c)
		}
	}
	if st := org.Stats(); st.Responses[salesforceemu.RouteQueryMore][400] != 1 || st.Requests[salesforceemu.RouteQueryAll] != 2 {
		t.Errorf("calls %v, want one expired locator and a second query", st.Responses)
	}
}

// TestTokenRequestIsTriedAgain meets a login host that answers 503 twice:
// the third token request gets the token; three 503s end the read.
func TestTokenRequestIsTriedAgain(t *testing.T) {
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	org.FailTokens(2)
	s, waits := openOn(t, org, nil)
	if _, err := s.Fields(context.Background()); err != nil || len(*waits) != 2 || org.TokenCalls() != 1 {
		t.Fatalf("describe after two 503s: %v, %d waits, %d tokens", err, len(*waits), org.TokenCalls())
	}
	org.FailTokens(3)
	s2, _ := openOn(t, org, nil)
	var te *TokenError
	if _, err := s2.Fields(context.Background()); !errors.As(err, &te) || te.Status != 503 {
		t.Errorf("describe after three 503s: %v", err)
	}
}
