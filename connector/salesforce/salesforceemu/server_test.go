package salesforceemu

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// org is a server with a token, for raw requests.
type org struct {
	*Server
	t     *testing.T
	token string
}

func newOrg(t *testing.T, opts Options) *org {
	t.Helper()
	s := NewServer(opts)
	t.Cleanup(s.Close)
	o := &org{Server: s, t: t}
	status, body := o.post(s.LoginURL+"/services/oauth2/token", url.Values{"grant_type": {"client_credentials"},
		"client_id": {s.ClientID()}, "client_secret": {s.ClientSecret()}})
	var tok struct {
		AccessToken string `json:"access_token"`
		InstanceURL string `json:"instance_url"`
	}
	if status != 200 || json.Unmarshal(body, &tok) != nil || tok.InstanceURL != s.InstanceURL {
		t.Fatalf("token: %d %s", status, body)
	}
	o.token = tok.AccessToken
	return o
}

func (o *org) post(u string, form url.Values) (int, []byte) {
	res, err := http.Post(u, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		o.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// do sends an API call and returns status, header and body.
func (o *org) do(method, path string, body any, hdr ...string) (int, http.Header, []byte) {
	o.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, o.InstanceURL+"/services/data/v62.0"+path, r)
	req.Header.Set("Authorization", "Bearer "+o.token)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

func (o *org) query(soql string, hdr ...string) (int, []byte) {
	st, _, b := o.do("GET", "/queryAll?q="+url.QueryEscape(soql), nil, hdr...)
	return st, b
}

func wantError(t *testing.T, what string, status int, body []byte, wantStatus int, code string) {
	t.Helper()
	var list []apiError
	if status != wantStatus || json.Unmarshal(body, &list) != nil || len(list) == 0 || list[0].ErrorCode != code {
		t.Errorf("%s: %d %s, want %d %s", what, status, body, wantStatus, code)
	}
}

func TestSOQLRefusesWhatItDoesNotRun(t *testing.T) {
	o := newOrg(t, Options{})
	for _, tc := range []struct{ name, soql, code string }{
		{"unknown field", "SELECT Id, Emial FROM Contact", "INVALID_FIELD"},
		{"unknown object", "SELECT Id FROM Contactt", "INVALID_TYPE"},
		{"AND and OR mixed", "SELECT Id FROM Contact WHERE LastName = 'a' AND FirstName = 'b' OR Email = 'c'", "MALFORMED_QUERY"},
		{"quoted dateTime", "SELECT Id FROM Contact WHERE SystemModstamp > '2026-01-05T09:00:00Z'", "INVALID_FIELD"},
		{"bad id", "SELECT Id FROM Contact WHERE Id > 'x'", "INVALID_QUERY_FILTER_OPERATOR"},
		{"aggregate", "SELECT MAX(LastName) FROM Contact", "MALFORMED_QUERY"},
		{"COUNT() ordered", "SELECT COUNT() FROM Contact ORDER BY Id", "MALFORMED_QUERY"},
		{"COUNT() and a field", "SELECT COUNT(), Id FROM Contact", "MALFORMED_QUERY"},
		{"offset", "SELECT Id FROM Contact LIMIT 5 OFFSET 10", "MALFORMED_QUERY"},
		{"no select", "Id FROM Contact", "MALFORMED_QUERY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, b := o.query(tc.soql)
			wantError(t, tc.soql, st, b, 400, tc.code)
		})
	}
}

func TestQueryPagesWithLocatorsAndQueryAllShowsDeletions(t *testing.T) {
	o := newOrg(t, Options{})
	ids := make([]string, 450)
	for i := range ids {
		ids[i] = o.Add("Contact", map[string]any{"LastName": fmt.Sprint("L", i)})
	}
	if err := o.Merge(ids[1], ids[2]); err != nil {
		t.Fatal(err)
	}
	var got []string
	st, b := o.query("SELECT Id, IsDeleted, MasterRecordId FROM Contact ORDER BY Id", "Sforce-Query-Options", "batchSize=200")
	for {
		var page struct {
			TotalSize      int              `json:"totalSize"`
			Done           bool             `json:"done"`
			NextRecordsURL string           `json:"nextRecordsUrl"`
			Records        []map[string]any `json:"records"`
		}
		if st != 200 || json.Unmarshal(b, &page) != nil || page.TotalSize != 450 || len(page.Records) > 200 {
			t.Fatalf("page: %d %.300s", st, b)
		}
		for _, r := range page.Records {
			got = append(got, r["Id"].(string))
			if r["Id"] == ids[2] && (r["IsDeleted"] != true || r["MasterRecordId"] != ids[1]) {
				t.Errorf("merged record %v", r)
			}
		}
		if page.Done {
			break
		}
		st, _, b = o.do("GET", strings.TrimPrefix(page.NextRecordsURL, "/services/data/v62.0"), nil, "Sforce-Query-Options", "batchSize=200")
	}
	if len(got) != 450 || got[0] != ids[0] || got[449] != ids[449] {
		t.Errorf("queryAll read %d records in order %v...", len(got), got[:2])
	}
	// COUNT(): the number in totalSize, no records.
	if st, b := o.query("SELECT COUNT() FROM Contact WHERE IsDeleted = false"); st != 200 || !strings.Contains(string(b), `"totalSize":449,"done":true,"records":null`) {
		t.Errorf("COUNT(): %d %s", st, b)
	}
	st, _, b = o.do("GET", "/query?q="+url.QueryEscape("SELECT Id FROM Contact WHERE Id = '"+ids[2]+"'"), nil)
	if st != 200 || !strings.Contains(string(b), `"totalSize":0`) {
		t.Errorf("query shows a deleted record: %s", b)
	}
	// A locator expires 2 days after the query (API 56.0 and later).
	_, b = o.query("SELECT Id FROM Contact", "Sforce-Query-Options", "batchSize=200")
	var page struct{ NextRecordsURL string }
	_ = json.Unmarshal(b, &page)
	o.Advance(49 * time.Hour)
	st, _, b = o.do("GET", strings.TrimPrefix(page.NextRecordsURL, "/services/data/v62.0"), nil)
	wantError(t, "expired locator", st, b, 400, "INVALID_QUERY_LOCATOR")
}

func TestCollectionsPerRecordErrorsAndLimits(t *testing.T) {
	rule := ValidationRule{Name: "Title", Field: "Title", Message: "Title may not be CEO",
		Refuse: func(r map[string]any) bool { return r["Title"] == "CEO" }}
	o := newOrg(t, Options{ValidationRules: []ValidationRule{rule}})
	rec := func(f map[string]any) map[string]any {
		f["attributes"] = map[string]string{"type": "Contact"}
		return f
	}
	st, _, b := o.do("POST", "/composite/sobjects", map[string]any{"allOrNone": false, "records": []any{
		rec(map[string]any{"LastName": "Ok"}),
		rec(map[string]any{"FirstName": "No last name"}),
		rec(map[string]any{"LastName": "Boss", "Title": "CEO"}),
		rec(map[string]any{"LastName": "Named", "Name": "read-only"}),
		rec(map[string]any{"LastName": "Mail", "Email": "not an address"}),
	}})
	var res []saveResult
	if st != 200 || json.Unmarshal(b, &res) != nil || len(res) != 5 {
		t.Fatalf("create: %d %s", st, b)
	}
	want := []string{"", "REQUIRED_FIELD_MISSING", "FIELD_CUSTOM_VALIDATION_EXCEPTION", "INVALID_FIELD_FOR_INSERT_UPDATE", "INVALID_EMAIL_ADDRESS"}
	for i, w := range want {
		switch {
		case w == "" && (!res[i].Success || res[i].ID == nil):
			t.Errorf("record %d: %+v, want created", i, res[i])
		case w != "" && (res[i].Success || len(res[i].Errors) != 1 || res[i].Errors[0].StatusCode != w || len(res[i].Errors[0].Fields) == 0):
			t.Errorf("record %d: %+v, want %s naming a field", i, res[i], w)
		}
	}
	if n := len(o.Records("Contact")); n != 1 {
		t.Errorf("%d Contacts, want only the valid one", n)
	}
	// allOrNone rolls the valid ones back too.
	_, _, b = o.do("POST", "/composite/sobjects", map[string]any{"allOrNone": true, "records": []any{
		rec(map[string]any{"LastName": "A"}), rec(map[string]any{"FirstName": "B"})}})
	if !strings.Contains(string(b), "ALL_OR_NONE_OPERATION_ROLLED_BACK") || len(o.Records("Contact")) != 1 {
		t.Errorf("allOrNone: %s", b)
	}
	// Over 200 records, an unknown field: the whole call is refused.
	many := make([]any, 201)
	for i := range many {
		many[i] = rec(map[string]any{"LastName": "x"})
	}
	st, _, b = o.do("POST", "/composite/sobjects", map[string]any{"records": many})
	wantError(t, "201 records", st, b, 400, "EXCEEDED_ID_LIMIT")
	st, _, b = o.do("PATCH", "/composite/sobjects", map[string]any{"records": []any{rec(map[string]any{"id": *res[0].ID, "Nickname__x": "x"})}})
	wantError(t, "unknown field", st, b, 400, "INVALID_FIELD")
	// Deleted, unknown and locked records.
	o.LockRecord(*res[0].ID, 1)
	_, _, b = o.do("DELETE", "/composite/sobjects?ids="+*res[0].ID+","+MakeID("0035g0000ZZZZZZ")+",bad&allOrNone=false", nil)
	for _, w := range []string{"UNABLE_TO_LOCK_ROW", "INVALID_CROSS_REFERENCE_KEY", "MALFORMED_ID"} {
		if !strings.Contains(string(b), w) {
			t.Errorf("delete answer lacks %s: %s", w, b)
		}
	}
	o.do("DELETE", "/composite/sobjects?ids="+*res[0].ID, nil)
	_, _, b = o.do("DELETE", "/composite/sobjects?ids="+*res[0].ID, nil)
	if !strings.Contains(string(b), "ENTITY_IS_DELETED") {
		t.Errorf("second delete: %s", b)
	}
}

func TestSessionsLimitsAndReplication(t *testing.T) {
	o := newOrg(t, Options{SessionCalls: 2, DailyLimit: 100, Used: 97})
	st, h, _ := o.do("GET", "/sobjects/Contact/describe", nil)
	if st != 200 || h.Get("Sforce-Limit-Info") != "api-usage=98/100" {
		t.Errorf("describe: %d, limit header %q", st, h.Get("Sforce-Limit-Info"))
	}
	o.do("GET", "/sobjects/Contact/describe", nil)
	st, _, b := o.do("GET", "/sobjects/Contact/describe", nil)
	wantError(t, "third call of a 2-call session", st, b, 401, "INVALID_SESSION_ID")
	o2 := newOrg(t, Options{DailyLimit: 1, Used: 1})
	st, _, b = o2.do("GET", "/sobjects/Contact/describe", nil)
	wantError(t, "spent allowance", st, b, 403, "REQUEST_LIMIT_EXCEEDED")

	o3 := newOrg(t, Options{})
	id := o3.Add("Contact", map[string]any{"LastName": "x"})
	start := o3.Now().Add(-time.Minute)
	o3.Advance(10 * time.Second)
	if err := o3.Delete(id); err != nil {
		t.Fatal(err)
	}
	o3.Advance(2 * time.Minute)
	q := url.Values{"start": {start.Format(time.RFC3339)}, "end": {o3.Now().Format(time.RFC3339)}}
	st, _, b = o3.do("GET", "/sobjects/Contact/deleted/?"+q.Encode(), nil)
	if st != 200 || !strings.Contains(string(b), id) || !strings.Contains(string(b), "earliestDateAvailable") {
		t.Errorf("getDeleted: %d %s", st, b)
	}
	q.Set("start", o3.Now().Add(-30*time.Second).Format(time.RFC3339))
	st, _, b = o3.do("GET", "/sobjects/Contact/deleted/?"+q.Encode(), nil)
	wantError(t, "a range under a minute", st, b, 400, "INVALID_REPLICATION_DATE")

	st, body := o3.post(o3.LoginURL+"/services/oauth2/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {"x"}, "client_secret": {"y"}})
	if st != 400 || !strings.Contains(string(body), `"error":"invalid_client"`) {
		t.Errorf("bad credentials: %d %s", st, body)
	}
}
