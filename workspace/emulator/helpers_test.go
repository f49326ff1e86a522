package emulator_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

const (
	testKey      = "test-key"
	readOnlyKey  = "read-only-key"
	versionName  = workspace.DefaultVersionHeader
	versionValue = workspace.DefaultVersion
)

var testFields = []workspace.CustomFieldDefinition{
	{Name: "Plan", Key: "plan", Type: "string"},
	{Name: "VIP", Key: "vip", Type: "boolean"},
	{Name: "Seats", Key: "seats", Type: "number"},
	{Name: "Renewal", Key: "renewal", Type: "date"},
	{Name: "Website", Key: "site", Type: "url"},
	{Name: "Tags", Key: "tags", Type: "multi-select"},
	{Name: "Office", Key: "office", Type: "address"},
}

// newServer starts an emulator without rate limit or faults unless opts
// says otherwise, closed at the end of the test.
func newServer(t *testing.T, opts emulator.Options) *emulator.Server {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = testKey
	}
	if opts.ReadOnlyKey == "" {
		opts.ReadOnlyKey = readOnlyKey
	}
	if opts.Rate == 0 {
		opts.Rate = -1
	}
	if opts.CustomFields == nil {
		opts.CustomFields = testFields
	}
	if opts.RetryBase == 0 {
		opts.RetryBase = 20 * time.Millisecond
	}
	s := emulator.NewServer(opts)
	t.Cleanup(s.Close)
	return s
}

// reply is an HTTP answer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// call sends one request with the test key and the version header; hdr
// overrides headers (an empty value removes one). body is sent as is when
// a string, JSON-encoded otherwise.
func call(t *testing.T, base, method, path string, body any, hdr ...string) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", testKey)
	req.Header.Set(versionName, versionValue)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: raw}
}

// data decodes {"data": v} of an answer, failing unless it has status want.
func data[T any](t *testing.T, r reply, want int) T {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
	var out struct{ Data T }
	if err := json.Unmarshal(r.body, &out); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return out.Data
}

// errorBody decodes an error answer, failing unless it has status want.
func errorBody(t *testing.T, r reply, want int) workspace.ErrorBody {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d: %s", r.status, want, r.body)
	}
	var eb workspace.ErrorBody
	if err := json.Unmarshal(r.body, &eb); err != nil {
		t.Fatalf("decode error body %s: %v", r.body, err)
	}
	if eb.Status != want || len(eb.Code) != 7 || eb.Title == "" || eb.Message == "" || eb.Docs == "" {
		t.Errorf("error body lacks status/code/title/message/docs: %s", r.body)
	}
	return eb
}

// paths returns the errors[].path of an error body.
func paths(eb workspace.ErrorBody) []string {
	out := make([]string, len(eb.Errors))
	for i, fe := range eb.Errors {
		out[i] = fe.Path
	}
	return out
}

// createContact creates a contact through the API.
func createContact(t *testing.T, base string, body any) workspace.Contact {
	t.Helper()
	return data[workspace.Contact](t, call(t, base, "POST", "/v1/contacts", body), http.StatusCreated)
}

// person is a minimal valid create body.
func person(first string, extra map[string]any) map[string]any {
	b := map[string]any{"defaultFields": map[string]any{"firstName": first}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// testForm is the form of custom field values the emulators of these
// tests take ($SYNCD_TEST_CUSTOM_FIELD_VALUES, typed by default).
var testForm = emulator.TestCustomFieldValues()

// fieldValue is vals as the value of the test field key in testForm: in
// the typed form the JSON kind of the field's type when vals fit it (no
// value is null), else vals as they are, so that refusals can be tested.
func fieldValue(key string, vals ...string) any {
	typ := ""
	for _, d := range testFields {
		if d.Key == key {
			typ = d.Type
		}
	}
	if testForm == workspace.ValuesArrays || typ == workspace.FieldMultiSelect {
		return append([]string{}, vals...)
	}
	switch {
	case len(vals) == 0:
		return nil
	case len(vals) > 1:
		return vals
	}
	v := vals[0]
	switch typ {
	case workspace.FieldBoolean:
		if v == "true" || v == "false" {
			return v == "true"
		}
	case workspace.FieldNumber:
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return json.Number(v)
		}
	case workspace.FieldDate:
		if len(v) == len(time.DateOnly) {
			if _, err := time.Parse(time.DateOnly, v); err == nil {
				return v + "T00:00:00.000Z"
			}
		}
	}
	return v
}

// fieldTexts returns the text of each custom field of c by key.
func fieldTexts(c workspace.Contact) map[string][]string {
	out := map[string][]string{}
	for _, f := range c.CustomFields {
		out[f.Key] = f.Value.Text()
	}
	return out
}

// wantErrorCode is the code and title of the 400 refusing errors at
// paths: the published document's "Invalid Custom Field Item" when they
// are all custom field items', else the general one.
func wantErrorCode(paths []string) (code, title string) {
	for _, p := range paths {
		if !strings.HasPrefix(p, "/customFields/") {
			return "0400400", "Bad Request"
		}
	}
	return "0401400", "Invalid Custom Field Item"
}
