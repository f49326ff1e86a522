package pipedrivetest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
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
	srv := NewServer(Options{CustomFields: []CustomField{{Name: "Score", Type: "double"}, {Name: "Tier", Type: "enum", Options: []string{"Gold"}}}})
	t.Cleanup(srv.Close)
	id := srv.Add(Person{Name: "Ada Lovelace"})
	score, tier := srv.CustomFields()[0].Key, srv.CustomFields()[1].Key
	tok := srv.Token()
	tests := []struct {
		name, method, path, token, body string
		status                          int
		msg                             string
	}{
		{"no token", "GET", "/api/v2/persons", "", "", 401, "authorized"},
		{"token in the query string", "GET", "/api/v2/persons?api_token=" + tok, tok, "", 401, "authorized"},
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
