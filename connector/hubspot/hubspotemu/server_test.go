package hubspotemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// do sends a request with the server's token (or tok when given) and
// decodes the JSON answer into a map.
func do(t *testing.T, s *Server, method, path string, body any, tok ...string) (int, http.Header, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, ok := body.(string)
		if !ok {
			raw, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			b = string(raw)
		}
		rd = strings.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	token := s.Token()
	if len(tok) > 0 {
		token = tok[0]
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var m map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s %s: answer is not JSON: %s", method, path, raw)
		}
	}
	return res.StatusCode, res.Header, m
}

func search(filters []map[string]any, extra map[string]any) map[string]any {
	b := map[string]any{"filterGroups": []any{map[string]any{"filters": filters}}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func resultIDs(m map[string]any) []string {
	var out []string
	rs, _ := m["results"].([]any)
	for _, r := range rs {
		out = append(out, r.(map[string]any)["id"].(string))
	}
	return out
}

func newTestServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s := NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

func TestAuth(t *testing.T) {
	s := newTestServer(t, Options{})
	for _, tok := range []string{"", "wrong"} {
		st, _, m := do(t, s, "GET", "/crm/v3/objects/contacts", nil, tok)
		if st != 401 || m["category"] != "INVALID_AUTHENTICATION" || m["status"] != "error" || m["correlationId"] == "" {
			t.Errorf("token %q: %d %v, want 401 with HubSpot's body", tok, st, m)
		}
	}
	if st, _, _ := do(t, s, "GET", "/crm/v3/objects/contacts", nil); st != 200 {
		t.Errorf("right token: %d", st)
	}
}

func TestSearchValidation(t *testing.T) {
	s := newTestServer(t, Options{SearchPerSecond: -1})
	many := func(n int) []map[string]any {
		var fs []map[string]any
		for range n {
			fs = append(fs, map[string]any{"propertyName": "email", "operator": "HAS_PROPERTY"})
		}
		return fs
	}
	groups := func(n, per int) map[string]any {
		var gs []any
		for range n {
			gs = append(gs, map[string]any{"filters": many(per)})
		}
		return map[string]any{"filterGroups": gs}
	}
	for _, tc := range []struct {
		name string
		body any
		want int
	}{
		{"limit 200 is fine", map[string]any{"limit": 200}, 200},
		{"limit over 200", map[string]any{"limit": 201}, 400},
		{"two sorts", map[string]any{"sorts": []any{"email", "-createdate"}}, 400},
		{"one sort", map[string]any{"sorts": []any{map[string]any{"propertyName": "email", "direction": "DESCENDING"}}}, 200},
		{"after at the cap", map[string]any{"after": "10000"}, 400},
		{"after below the cap", map[string]any{"after": "9999"}, 200},
		{"six groups", groups(6, 1), 400},
		{"seven filters in a group", groups(1, 7), 400},
		{"twenty filters", groups(4, 5), 400},
		{"eighteen filters", groups(3, 6), 200},
		{"unknown operator", search([]map[string]any{{"propertyName": "email", "operator": "LIKE", "value": "x"}}, nil), 400},
		{"body over 3000 characters", map[string]any{"properties": []string{strings.Repeat("p", 3000)}}, 400},
		{"bad JSON", "{", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, m := do(t, s, "POST", "/crm/v3/objects/contacts/search", tc.body)
			if st != tc.want {
				t.Fatalf("status %d (%v), want %d", st, m, tc.want)
			}
			if st == 400 && (m["category"] != "VALIDATION_ERROR" || m["message"] == "") {
				t.Errorf("400 body %v lacks HubSpot's fields", m)
			}
		})
	}
}

func TestSearchFiltersSortAndPaging(t *testing.T) {
	s := newTestServer(t, Options{Seed: 1, SearchPerSecond: -1})
	var ids []string
	for i := range 30 {
		s.SetClock(t0.Add(time.Duration(i/3) * time.Second)) // three per instant
		ids = append(ids, s.Add(map[string]string{"email": fmt.Sprintf("u%02d@example.com", i), "firstname": fmt.Sprint(i % 2)}))
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).UnixMilli(), 10) }
	for _, tc := range []struct {
		name    string
		filters []map[string]any
		want    []string
	}{
		{"GTE and LT on lastmodifieddate", []map[string]any{
			{"propertyName": "lastmodifieddate", "operator": "GTE", "value": ms(2 * time.Second)},
			{"propertyName": "lastmodifieddate", "operator": "LT", "value": ms(4 * time.Second)},
		}, ids[6:12]},
		{"GT on hs_object_id", []map[string]any{{"propertyName": "hs_object_id", "operator": "GT", "value": ids[26]}}, ids[27:]},
		{"BETWEEN is inclusive", []map[string]any{
			{"propertyName": "lastmodifieddate", "operator": "BETWEEN", "value": ms(0), "highValue": ms(time.Second)},
		}, ids[:6]},
		{"EQ on a date as ISO", []map[string]any{{"propertyName": "lastmodifieddate", "operator": "EQ", "value": t0.Format(time.RFC3339)}}, ids[:3]},
		{"IN", []map[string]any{{"propertyName": "email", "operator": "IN", "values": []string{"u01@example.com", "U03@example.com"}}}, []string{ids[1], ids[3]}},
		{"NOT_HAS_PROPERTY", []map[string]any{{"propertyName": "phone", "operator": "NOT_HAS_PROPERTY"}, {"propertyName": "hs_object_id", "operator": "LTE", "value": ids[1]}}, ids[:2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _, m := do(t, s, "POST", "/crm/v3/objects/contacts/search", search(tc.filters, map[string]any{"limit": 100}))
			if st != 200 {
				t.Fatalf("status %d: %v", st, m)
			}
			if got := resultIDs(m); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("ids %v, want %v", got, tc.want)
			}
		})
	}

	// Offset paging with one sort: DESCENDING on email, 7 a page.
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		body := map[string]any{"limit": 7, "sorts": []any{map[string]any{"propertyName": "email", "direction": "DESCENDING"}}, "properties": []string{"email"}}
		if after != "" {
			body["after"] = after
		}
		st, _, m := do(t, s, "POST", "/crm/v3/objects/contacts/search", body)
		if st != 200 || m["total"].(float64) != 30 {
			t.Fatalf("page %d: %d %v", pages, st, m)
		}
		got = append(got, resultIDs(m)...)
		p, _ := m["paging"].(map[string]any)
		if p == nil {
			break
		}
		after = p["next"].(map[string]any)["after"].(string)
	}
	for i := range got {
		if got[i] != ids[29-i] {
			t.Fatalf("descending paging gave %v", got)
		}
	}
	// Requested properties come back, null when unset, with the three
	// always-present ones.
	_, _, m := do(t, s, "POST", "/crm/v3/objects/contacts/search", map[string]any{"limit": 1, "properties": []string{"phone"}})
	props := m["results"].([]any)[0].(map[string]any)["properties"].(map[string]any)
	if v, ok := props["phone"]; !ok || v != nil || props["hs_object_id"] != ids[0] || props["lastmodifieddate"] == nil || props["email"] != nil {
		t.Errorf("properties %v", props)
	}
}

func TestSearchCapAndArchivedAndLag(t *testing.T) {
	s := newTestServer(t, Options{Seed: 2, SearchPerSecond: -1, SearchLag: 10 * time.Second})
	s.SetClock(t0)
	for range 10050 {
		s.Add(nil)
	}
	// Searchable only after the lag.
	st, _, m := do(t, s, "POST", "/crm/v3/objects/contacts/search", map[string]any{"limit": 1})
	if st != 200 || m["total"].(float64) != 0 {
		t.Fatalf("before the lag: %d %v, want nothing", st, m)
	}
	s.Advance(10 * time.Second)
	st, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/search", map[string]any{"limit": 200, "after": "9800"})
	if st != 200 || m["paging"] == nil {
		t.Fatalf("page before the cap: %d %v", st, m)
	}
	// paging.next points at the cap, and following it fails.
	next := m["paging"].(map[string]any)["next"].(map[string]any)["after"].(string)
	st, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/search", map[string]any{"limit": 200, "after": next})
	if st != 400 || m["category"] != "VALIDATION_ERROR" {
		t.Fatalf("past the cap: %d %v, want 400", st, m)
	}
	// An archived contact leaves search at once; an update shows late.
	first := s.Contacts()[0].ID
	second := s.Contacts()[1].ID
	if err := s.Archive(first); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(second, map[string]string{"firstname": "late"}); err != nil {
		t.Fatal(err)
	}
	body := search([]map[string]any{{"propertyName": "hs_object_id", "operator": "IN", "values": []string{first, second}}}, map[string]any{"properties": []string{"firstname"}})
	_, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/search", body)
	res := m["results"].([]any)
	if len(res) != 1 || res[0].(map[string]any)["properties"].(map[string]any)["firstname"] != nil {
		t.Fatalf("right after: %v, want only the old version of %s", res, second)
	}
	s.Advance(10 * time.Second)
	_, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/search", body)
	res = m["results"].([]any)
	if len(res) != 1 || res[0].(map[string]any)["properties"].(map[string]any)["firstname"] != "late" {
		t.Fatalf("after the lag: %v", res)
	}
	c, _ := s.Contact(first)
	if !c.Archived || !c.UpdatedAt.Equal(t0) || !c.ArchivedAt.Equal(t0.Add(10*time.Second)) {
		t.Errorf("archived contact %+v: archiving must keep lastmodifieddate", c)
	}
}

func TestListEndpoint(t *testing.T) {
	s := newTestServer(t, Options{Seed: 3})
	s.SetClock(t0)
	var ids []string
	for range 250 {
		ids = append(ids, s.Add(nil))
	}
	for _, id := range ids[:3] {
		if err := s.Archive(id); err != nil {
			t.Fatal(err)
		}
	}
	if st, _, _ := do(t, s, "GET", "/crm/v3/objects/contacts?limit=101", nil); st != 400 {
		t.Errorf("limit 101: %d, want 400", st)
	}
	count := func(archived bool) ([]string, int) {
		var got []string
		calls, after := 0, ""
		for {
			path := "/crm/v3/objects/contacts?limit=100&properties=email,firstname"
			if archived {
				path += "&archived=true"
			}
			if after != "" {
				path += "&after=" + after
			}
			st, _, m := do(t, s, "GET", path, nil)
			calls++
			if st != 200 {
				t.Fatalf("%s: %d %v", path, st, m)
			}
			for _, r := range m["results"].([]any) {
				o := r.(map[string]any)
				if o["archived"] != archived || (archived && o["archivedAt"] == nil) {
					t.Fatalf("result %v in a list with archived=%v", o, archived)
				}
				got = append(got, o["id"].(string))
			}
			p, _ := m["paging"].(map[string]any)
			if p == nil {
				return got, calls
			}
			after = p["next"].(map[string]any)["after"].(string)
		}
	}
	if live, calls := count(false); len(live) != 247 || live[0] != ids[3] || calls != 3 {
		t.Errorf("live: %d contacts in %d calls", len(live), calls)
	}
	if archived, _ := count(true); strings.Join(archived, ",") != strings.Join(ids[:3], ",") {
		t.Errorf("archived: %v, want %v", archived, ids[:3])
	}
	st, _, m := do(t, s, "GET", "/crm/v3/properties/contacts", nil)
	if st != 200 || len(m["results"].([]any)) != len(StandardProperties) {
		t.Errorf("properties: %d %v", st, m)
	}
}

func TestBatchEndpoints(t *testing.T) {
	s := newTestServer(t, Options{Seed: 4, KeepBatchOrder: true, Properties: []string{"custom"}})
	s.SetClock(t0)
	id := s.Add(map[string]string{"email": "a@example.com"})
	inputs := func(n int) map[string]any {
		var in []any
		for range n {
			in = append(in, map[string]any{"id": id, "properties": map[string]any{"firstname": "x"}})
		}
		return map[string]any{"inputs": in}
	}
	if st, _, m := do(t, s, "POST", "/crm/v3/objects/contacts/batch/archive", inputs(101)); st != 400 || m["category"] != "VALIDATION_ERROR" {
		t.Errorf("101 inputs: %d %v", st, m)
	}
	if st, _, m := do(t, s, "POST", "/crm/v3/objects/contacts/batch/update", inputs(2)); st != 400 || !strings.Contains(m["message"].(string), "Duplicate IDs") {
		t.Errorf("duplicate ids: %d %v", st, m)
	}
	// Update: a missing id makes a 207; lastmodifieddate moves.
	s.SetClock(t0.Add(time.Minute))
	st, _, m := do(t, s, "POST", "/crm/v3/objects/contacts/batch/update", map[string]any{"inputs": []any{
		map[string]any{"id": id, "properties": map[string]any{"custom": 7, "firstname": "b"}},
		map[string]any{"id": "77", "properties": map[string]any{"firstname": "c"}},
	}})
	errs, _ := m["errors"].([]any)
	if st != 207 || len(errs) != 1 || errs[0].(map[string]any)["category"] != "OBJECT_NOT_FOUND" {
		t.Fatalf("update: %d %v", st, m)
	}
	if c, _ := s.Contact(id); c.Properties["custom"] != "7" || !c.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Errorf("updated contact %+v", c)
	}
	// Create: 201, or 207 with errors by objectWriteTraceId.
	st, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/batch/create", map[string]any{"inputs": []any{
		map[string]any{"properties": map[string]any{"email": "b@example.com"}},
	}})
	if st != 201 || len(resultIDs(m)) != 1 {
		t.Fatalf("create: %d %v", st, m)
	}
	st, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/batch/create", map[string]any{"inputs": []any{
		map[string]any{"objectWriteTraceId": "t1", "properties": map[string]any{"email": "A@example.com"}},
		map[string]any{"objectWriteTraceId": "t2", "properties": map[string]any{"email": "c@example.com"}},
	}})
	errs, _ = m["errors"].([]any)
	if st != 207 || len(errs) != 1 || len(resultIDs(m)) != 1 {
		t.Fatalf("multi-status create: %d %v", st, m)
	}
	e := errs[0].(map[string]any)
	if e["category"] != "CONFLICT" || e["context"].(map[string]any)["objectWriteTraceId"].([]any)[0] != "t1" ||
		!strings.Contains(e["message"].(string), "Existing ID: "+id) {
		t.Errorf("conflict error %v", e)
	}
	// Without trace ids the conflict fails the whole call.
	st, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/batch/create", map[string]any{"inputs": []any{
		map[string]any{"properties": map[string]any{"email": "d@example.com"}},
		map[string]any{"properties": map[string]any{"email": "a@example.com"}},
	}})
	if st != 409 || m["category"] != "CONFLICT" || len(s.Contacts()) != 3 {
		t.Errorf("create without trace ids: %d %v, %d contacts", st, m, len(s.Contacts()))
	}
	// Archive: 204 whatever the ids; read reports the missing ones.
	if st, _, _ := do(t, s, "POST", "/crm/v3/objects/contacts/batch/archive", map[string]any{"inputs": []any{map[string]any{"id": id}, map[string]any{"id": "5"}}}); st != 204 {
		t.Errorf("archive: %d", st)
	}
	st, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/batch/read", map[string]any{"inputs": []any{map[string]any{"id": id}}})
	if st != 207 || len(resultIDs(m)) != 0 {
		t.Errorf("read of an archived contact: %d %v", st, m)
	}
}

func TestRateLimits(t *testing.T) {
	s := newTestServer(t, Options{RateLimit: 3, RateWindow: time.Hour, DailyLimit: 5})
	for i := range 3 {
		st, h, _ := do(t, s, "GET", "/crm/v3/objects/contacts", nil)
		if st != 200 || h.Get("X-HubSpot-RateLimit-Remaining") != strconv.Itoa(2-i) || h.Get("X-HubSpot-RateLimit-Daily") != "5" {
			t.Fatalf("call %d: %d %v", i, st, h)
		}
	}
	st, h, m := do(t, s, "GET", "/crm/v3/objects/contacts", nil)
	if st != 429 || m["policyName"] != "TEN_SECONDLY_ROLLING" || m["errorType"] != "RATE_LIMIT" || h.Get("X-HubSpot-RateLimit-Interval-Milliseconds") != "3600000" {
		t.Fatalf("over the limit: %d %v %v", st, m, h)
	}

	s2 := newTestServer(t, Options{})
	var codes []int
	for range 7 {
		st, h, m := do(t, s2, "POST", "/crm/v3/objects/contacts/search", map[string]any{})
		codes = append(codes, st)
		if st == 429 && m["policyName"] != "SECONDLY" {
			t.Errorf("search 429 body %v", m)
		}
		if st == 200 && h.Get("X-HubSpot-RateLimit-Remaining") != "" {
			t.Errorf("search answers carry only the daily headers")
		}
	}
	if n := s2.Stats().RateLimited(RouteSearch); n < 1 || n > 2 || codes[0] != 200 {
		t.Errorf("7 quick searches: %v, want the 6th or 7th refused by the 5/s limit", codes)
	}

	s3 := newTestServer(t, Options{DailyLimit: 1})
	do(t, s3, "GET", "/crm/v3/objects/contacts", nil)
	if st, _, m := do(t, s3, "GET", "/crm/v3/objects/contacts", nil); st != 429 || m["policyName"] != "DAILY" {
		t.Errorf("over the daily limit: %d %v", st, m)
	}
}

func TestFaultsAndStats(t *testing.T) {
	s := newTestServer(t, Options{})
	s.Inject(RouteList, Fault{Status: 429, RetryAfter: "2"}, Fault{}, Fault{Status: 423}, Fault{Status: 503})
	want := []int{429, 200, 423, 503, 200}
	for i, w := range want {
		st, h, _ := do(t, s, "GET", "/crm/v3/objects/contacts", nil)
		if st != w {
			t.Errorf("call %d: %d, want %d", i, st, w)
		}
		if i == 0 && h.Get("Retry-After") != "2" {
			t.Errorf("Retry-After %q", h.Get("Retry-After"))
		}
	}
	st := s.Stats()
	if st.Requests[RouteList] != 5 || st.Responses[RouteList][200] != 2 || st.RateLimited(RouteList) != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestDeterministicWithSeed(t *testing.T) {
	ids := func() []string {
		s := newTestServer(t, Options{Seed: 42})
		s.SetClock(t0)
		return []string{s.Add(nil), s.Add(nil), s.Add(nil)}
	}
	a, b := ids(), ids()
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("same seed, ids %v and %v", a, b)
	}
}

// TestMerge merges contacts as HubSpot documents it: through the merge
// endpoint, a new contact with a new id carrying hs_merged_object_ids
// (cumulative), the primary's values winning, both old ids gone from
// search and lists (the archived one unless ArchiveMerged) and reading as
// the new contact; with LegacyMerge the primary keeps its id.
func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name            string
		legacy, archive bool
	}{{"new id", false, false}, {"legacy keeps the primary", true, false}, {"new id, merged-away listed as archived", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestServer(t, Options{Seed: 7, SearchPerSecond: -1, LegacyMerge: tc.legacy, ArchiveMerged: tc.archive})
			s.SetClock(t0)
			a := s.Add(map[string]string{"email": "a@example.com", "firstname": "Ada"})
			b := s.Add(map[string]string{"email": "b@example.com", "firstname": "Bea", "phone": "+15550100"})
			s.Advance(time.Minute)
			st, _, m := do(t, s, "POST", "/crm/v3/objects/contacts/merge", map[string]any{"primaryObjectId": a, "objectIdToMerge": b})
			if st != 200 {
				t.Fatalf("merge: %d %v", st, m)
			}
			won := m["id"].(string)
			if tc.legacy != (won == a) || won == b {
				t.Fatalf("merged contact id %s (a %s, b %s), legacy %v", won, a, b, tc.legacy)
			}
			c, _ := s.Contact(won)
			want := joinIDs(sortedIDs(t, a, b))
			if tc.legacy {
				want = b
			}
			if c.Properties["hs_merged_object_ids"] != want || c.Properties["firstname"] != "Ada" || c.Properties["phone"] != "+15550100" ||
				c.Properties["email"] != "a@example.com" || !c.UpdatedAt.Equal(t0.Add(time.Minute)) {
				t.Errorf("merged contact %+v: want merged ids %s, the primary's values completed by the other's, modified at the merge", c, want)
			}
			// The merged-away ids read as the merged contact.
			for _, old := range []string{a, b} {
				if old == won {
					continue
				}
				st, _, m = do(t, s, "GET", "/crm/v3/objects/contacts/"+old, nil)
				if st != 200 || m["id"] != won {
					t.Errorf("GET merged-away %s: %d %v, want the merged contact %s", old, st, m, won)
				}
				if into, ok := s.MergedInto(old); !ok || into != won {
					t.Errorf("MergedInto(%s) = %s, %v", old, into, ok)
				}
				_, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/batch/read", map[string]any{"inputs": []any{map[string]any{"id": old}}})
				if ids := resultIDs(m); len(ids) != 1 || ids[0] != won {
					t.Errorf("batch read of %s: %v, want %s", old, ids, won)
				}
			}
			// Only the merged contact is left, in search and lists.
			_, _, m = do(t, s, "POST", "/crm/v3/objects/contacts/search", map[string]any{"limit": 10})
			if ids := resultIDs(m); len(ids) != 1 || ids[0] != won {
				t.Errorf("search after the merge: %v, want only %s", ids, won)
			}
			_, _, m = do(t, s, "GET", "/crm/v3/objects/contacts?limit=10", nil)
			if ids := resultIDs(m); len(ids) != 1 || ids[0] != won {
				t.Errorf("list after the merge: %v, want only %s", ids, won)
			}
			_, _, m = do(t, s, "GET", "/crm/v3/objects/contacts?archived=true&limit=10", nil)
			var wantArchived []string
			if tc.archive {
				wantArchived = []string{a, b}
			}
			if ids := resultIDs(m); !slices.Equal(ids, wantArchived) {
				t.Errorf("archived list after the merge: %v, want %v", ids, wantArchived)
			}
			// A later merge carries the earlier ids along.
			d := s.Add(map[string]string{"email": "d@example.com"})
			again, err := s.Merge(d, won)
			if err != nil {
				t.Fatal(err)
			}
			c, _ = s.Contact(again)
			for _, id := range []string{a, b, d} {
				if in := strings.Contains(";"+c.Properties["hs_merged_object_ids"]+";", ";"+id+";"); in == (id == again) {
					t.Errorf("second merge's ids %q: %s in them is %v, want every old id but the survivor's own", c.Properties["hs_merged_object_ids"], id, in)
				}
			}
			// Refusals.
			if st, _, _ := do(t, s, "POST", "/crm/v3/objects/contacts/merge", map[string]any{"primaryObjectId": again, "objectIdToMerge": again}); st != 400 {
				t.Errorf("merge with itself: %d, want 400", st)
			}
			if st, _, _ := do(t, s, "POST", "/crm/v3/objects/contacts/merge", map[string]any{"primaryObjectId": again, "objectIdToMerge": "1"}); st != 404 {
				t.Errorf("merge with an unknown id: %d, want 404", st)
			}
			if st, _, _ := do(t, s, "GET", "/crm/v3/objects/contacts/1", nil); st != 404 {
				t.Errorf("GET an unknown id: %d, want 404", st)
			}
		})
	}
}

func sortedIDs(t *testing.T, ids ...string) []int64 {
	t.Helper()
	var out []int64
	for _, id := range ids {
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
