package pipedriveemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func do(t *testing.T, srv *Server, method, path, token, body string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("x-api-token", token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var m map[string]any
	_ = json.Unmarshal(bytes.TrimSpace(b), &m)
	return res.StatusCode, m, res.Header
}

// TestRefusals: the server refuses what API v2 refuses.
func TestRefusals(t *testing.T) {
	srv := NewServer(Options{CustomFields: []CustomField{{Name: "Score", Type: "double"}, {Name: "Tier", Type: "enum", Options: []string{"Gold"}}, {Name: "Budget", Type: "monetary"}}})
	t.Cleanup(srv.Close)
	id := srv.Add(Person{Name: "Ada Lovelace"})
	score, tier, budget := srv.CustomFields()[0].Key, srv.CustomFields()[1].Key, srv.CustomFields()[2].Key
	tok := srv.Token()
	tests := []struct {
		name, method, path, token, body string
		status                          int
		msg                             string
	}{
		{"no token", "GET", "/api/v2/persons", "", "", 401, "authorized"},
		{"token in the query string", "GET", "/api/v2/persons?api_token=" + tok, tok, "", 401, "authorized"},
		{"v2 with the token in the query string only", "GET", "/api/v2/persons?api_token=" + tok, "", "", 401, "authorized"},
		{"v1 with a wrong token in the query string", "GET", "/v1/recents?items=person&since_timestamp=2025-01-01%2000:00:00&api_token=x", "", "", 401, "authorized"},
		{"a monetary amount without its currency object", "PATCH", "/api/v2/persons/" + id, tok, `{"custom_fields":{"` + budget + `":4321}}`, 400, "must be an object"},
		{"a monetary object without currency", "PATCH", "/api/v2/persons/" + id, tok, `{"custom_fields":{"` + budget + `":{"value":4321}}}`, 400, "currency is required"},
		{"a monetary amount as a string", "PATCH", "/api/v2/persons/" + id, tok, `{"custom_fields":{"` + budget + `":{"value":"4321","currency":"EUR"}}}`, 400, "number"},
		{"merge without merge_with_id", "PUT", "/v1/persons/" + id + "/merge", tok, `{}`, 400, "merge_with_id"},
		{"merge with itself", "PUT", "/v1/persons/" + id + "/merge", tok, `{"merge_with_id":` + id + `}`, 400, "itself"},
		{"merge with a missing person", "PUT", "/v1/persons/" + id + "/merge", tok, `{"merge_with_id":999}`, 404, "not found"},
		{"limit over 500", "GET", "/api/v2/persons?limit=501", tok, "", 400, "limit"},
		{"unknown parameter", "GET", "/api/v2/persons?since=2025-01-01T00:00:00Z", tok, "", 400, "unknown parameter"},
		{"not RFC 3339", "GET", "/api/v2/persons?updated_since=2025-01-01%2000:00:00", tok, "", 400, "RFC 3339"},
		{"bad sort", "GET", "/api/v2/persons?sort_by=name", tok, "", 400, "sort_by"},
		{"bad cursor", "GET", "/api/v2/persons?cursor=xyz", tok, "", 400, "cursor"},
		{"create without name", "POST", "/api/v2/persons", tok, `{"emails":[{"value":"a@b.c","label":"work"}]}`, 400, "name is required"},
		{"first_name is not writable", "POST", "/api/v2/persons", tok, `{"name":"A","first_name":"A"}`, 400, "unknown field"},
		{"a label not in the list", "PATCH", "/api/v2/persons/" + id, tok, `{"emails":[{"value":"a@b.c","label":"mobile"}]}`, 400, "label"},
		{"a number as a string", "PATCH", "/api/v2/persons/" + id, tok, `{"custom_fields":{"` + score + `":"4.5"}}`, 400, "number"},
		{"an unknown option", "PATCH", "/api/v2/persons/" + id, tok, `{"custom_fields":{"` + tier + `":7}}`, 400, "option"},
		{"an unknown custom field", "PATCH", "/api/v2/persons/" + id, tok, `{"custom_fields":{"abc":1}}`, 400, "unknown custom field"},
		{"owner_id as a string", "PATCH", "/api/v2/persons/" + id, tok, `{"owner_id":"1"}`, 400, "integer"},
		{"an organization that does not exist", "PATCH", "/api/v2/persons/" + id, tok, `{"org_id":99}`, 400, "organization"},
		{"update of a missing person", "PATCH", "/api/v2/persons/999", tok, `{"name":"X"}`, 404, "not found"},
		{"recents without since_timestamp", "GET", "/v1/recents?items=person", tok, "", 400, "since_timestamp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := do(t, srv, tt.method, tt.path, tt.token, tt.body)
			msg, _ := body["error"].(string)
			if status != tt.status || !strings.Contains(msg, tt.msg) || body["success"] != false {
				t.Errorf("%d %v, want %d with an error naming %q", status, body, tt.status, tt.msg)
			}
		})
	}
	if p, _ := srv.Get(id); p.Name != "Ada Lovelace" || p.Custom != nil {
		t.Errorf("a refused write changed the person: %+v", p)
	}
}

// TestBurstHeaders: every answer carries the burst window's headers; the
// request over the limit is a 429 with x-ratelimit-remaining 0.
func TestBurstHeaders(t *testing.T) {
	srv := NewServer(Options{BurstLimit: 3})
	t.Cleanup(srv.Close)
	var last http.Header
	statuses := []int{}
	for range 4 {
		st, _, h := do(t, srv, "GET", "/api/v2/persons", srv.Token(), "")
		statuses = append(statuses, st)
		last = h
	}
	if statuses[2] != 200 || statuses[3] != 429 {
		t.Errorf("statuses %v, want the 4th to be 429", statuses)
	}
	if last.Get("x-ratelimit-limit") != "3" || last.Get("x-ratelimit-remaining") != "0" || last.Get("x-ratelimit-reset") == "" {
		t.Errorf("429 headers %v", last)
	}
}

// TestV1TokenInQuery: API v1 also takes the api_token query parameter
// (its older documented form); v2 does not (TestRefusals).
func TestV1TokenInQuery(t *testing.T) {
	srv := NewServer(Options{})
	t.Cleanup(srv.Close)
	status, body, _ := do(t, srv, "GET", "/v1/recents?items=person&since_timestamp=2025-01-01%2000:00:00&api_token="+srv.Token(), "", "")
	if status != 200 || body["success"] != true {
		t.Errorf("v1 with api_token in the query: %d %v", status, body)
	}
}

// TestMillisecondUpdateTime: v2 answers update_time in RFC 3339 with
// milliseconds, and sorts and pages by them.
func TestMillisecondUpdateTime(t *testing.T) {
	srv := NewServer(Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 700e6, time.UTC))
	late := srv.Add(Person{Name: "Late"})
	srv.SetClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).Add(250 * time.Millisecond))
	early := srv.Add(Person{Name: "Early"})
	_, body, _ := do(t, srv, "GET", "/api/v2/persons?sort_by=update_time&limit=1", srv.Token(), "")
	data := body["data"].([]any)
	p := data[0].(map[string]any)
	if p["update_time"] != "2026-03-02T09:00:00.250Z" || fmt.Sprint(p["id"]) != early {
		t.Errorf("first by update_time: %v, want person %s at 09:00:00.250Z", p, early)
	}
	next := body["additional_data"].(map[string]any)["next_cursor"].(string)
	_, body, _ = do(t, srv, "GET", "/api/v2/persons?sort_by=update_time&limit=1&cursor="+next, srv.Token(), "")
	if p := body["data"].([]any)[0].(map[string]any); fmt.Sprint(p["id"]) != late || p["update_time"] != "2026-03-02T09:00:00.700Z" {
		t.Errorf("second page %v, want person %s at .700", p, late)
	}
}

// TestMergeRoute: PUT /v1/persons/{id}/merge deletes the person of the
// path and keeps merge_with_id, its values first, the other's e-mail
// addresses added, merge_what_id set; it costs a write's tokens.
func TestMergeRoute(t *testing.T) {
	srv := NewServer(Options{})
	t.Cleanup(srv.Close)
	loser := srv.Add(Person{Name: "Ada L", Emails: []Item{{Value: "ada@old.example", Label: "home"}}})
	keep := srv.Add(Person{Name: "Ada Lovelace", Emails: []Item{{Value: "ada@example.com", Label: "work"}}})
	status, body, _ := do(t, srv, "PUT", "/v1/persons/"+loser+"/merge", srv.Token(), `{"merge_with_id":`+keep+`}`)
	data, _ := body["data"].(map[string]any)
	if status != 200 || fmt.Sprint(data["id"]) != keep || fmt.Sprint(data["merge_what_id"]) != loser || data["name"] != "Ada Lovelace" {
		t.Fatalf("merge: %d %v", status, body)
	}
	if p, _ := srv.Get(loser); !p.Deleted {
		t.Errorf("the merged-away person is not deleted")
	}
	if p, _ := srv.Get(keep); len(p.Emails) != 2 || p.MergeWhatID != loser {
		t.Errorf("kept person %+v, want both e-mail addresses and merge_what_id %s", p, loser)
	}
	if st := srv.Stats(); st.TokensSpent != 10 {
		t.Errorf("%d tokens spent, want 10 (a write)", st.TokensSpent)
	}
}

// TestSearchLimit: the Search API allows 10 requests per 2-second window
// (every plan); the 11th is a 429 reporting that window, while other
// routes go on.
func TestSearchLimit(t *testing.T) {
	srv := NewServer(Options{BurstLimit: 100})
	t.Cleanup(srv.Close)
	var statuses []int
	var last http.Header
	for range 11 {
		st, _, h := do(t, srv, "GET", "/api/v2/organizations/search?term=x&exact_match=true", srv.Token(), "")
		statuses = append(statuses, st)
		last = h
	}
	if statuses[9] != 200 || statuses[10] != 429 {
		t.Errorf("statuses %v, want the 11th search refused", statuses)
	}
	if last.Get("x-ratelimit-limit") != "10" || last.Get("x-ratelimit-remaining") != "0" {
		t.Errorf("search 429 headers %v, want the search window's", last)
	}
	if st, _, h := do(t, srv, "GET", "/api/v2/persons", srv.Token(), ""); st != 200 || h.Get("x-ratelimit-limit") != "100" {
		t.Errorf("a list after the searches: %d %v", st, h)
	}
}
