package emulator

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// serve runs one request through the handler in-process.
func serve(e *Emulator, method, target, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Authorization", e.opts.APIKey)
	req.Header.Set(e.opts.VersionHeader, e.opts.Version)
	w := httptest.NewRecorder()
	e.Handler().ServeHTTP(w, req)
	return w
}

// TestScale200k: 200,000 contacts (stored directly: creating them over
// HTTP under the race detector would take minutes) are listed, filtered,
// paged, read, changed and deleted. The cost of listing is checked as the
// number of records each call examines, which does not depend on the
// machine's load: a filtered lookup examines only the matches, and paging
// to the end is linear overall, not quadratic.
func TestScale200k(t *testing.T) {
	const n = 200_000
	e := New(Options{APIKey: "k", Rate: -1})
	defer e.Close()
	now := e.now()
	e.mu.Lock()
	for i := 0; i < n; i++ {
		first, src, ext := fmt.Sprintf("p%d", i), "custom-a", fmt.Sprintf("ext-%d", i)
		if i%100 == 0 {
			src = "custom-b"
		}
		in := contactCreateIn{Source: &src, ExternalID: &ext}
		in.DefaultFields.FirstName = &first
		e.state.addContact(e.buildContact(&in, false, now))
	}
	e.mu.Unlock()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	t.Logf("heap with %d contacts: %d MiB", n, ms.HeapAlloc>>20)

	slowest := time.Duration(0)
	scanned := func() int {
		e.mu.Lock()
		defer e.mu.Unlock()
		n := e.state.scanned
		e.state.scanned = 0
		return n
	}
	timed := func(method, target, body string, want int) *httptest.ResponseRecorder {
		t.Helper()
		start := time.Now()
		w := serve(e, method, target, body)
		if d := time.Since(start); d > slowest {
			slowest = d
		}
		if w.Code != want {
			t.Fatalf("%s %s: %d %s", method, target, w.Code, w.Body)
		}
		return w
	}
	decode := func(w *httptest.ResponseRecorder) listPage {
		var p listPage
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}

	q := url.Values{}
	for i := 0; i < workspace.MaxListFilterValues; i++ {
		q.Add("externalIds", fmt.Sprintf("ext-%d", i*3997))
	}
	if p := decode(timed("GET", "/v1/contacts?maxResults=50&"+q.Encode(), "", 200)); len(p.Data) != 50 || p.NextPageToken != nil {
		t.Errorf("50 externalIds: %d contacts, token %v", len(p.Data), p.NextPageToken)
	}
	if got := scanned(); got != 50 {
		t.Errorf("a lookup of 50 externalIds examined %d records, want 50", got)
	}
	// Page deep into a sparse source filter (1 in 100).
	p := decode(timed("GET", "/v1/contacts?sources=custom-b&maxResults=50", "", 200))
	pages, total := 1, len(p.Data)
	for p.NextPageToken != nil {
		p = decode(timed("GET", "/v1/contacts?sources=custom-b&maxResults=50&pageToken="+*p.NextPageToken, "", 200))
		pages++
		total += len(p.Data)
	}
	if total != n/100 || pages != n/100/50 || p.TotalItems != n/100 {
		t.Errorf("source filter: %d contacts in %d pages, totalItems %d", total, pages, p.TotalItems)
	}
	if got := scanned(); got > n+pages*100 {
		t.Errorf("paging a sparse filter to the end examined %d records, want at most %d", got, n+pages*100)
	}
	// The last page of everything.
	e.mu.Lock()
	tok := encodePageToken(e.state.order[n-51].seq)
	id := e.state.order[n/2].c.ID
	e.mu.Unlock()
	if p := decode(timed("GET", "/v1/contacts?maxResults=50&pageToken="+tok, "", 200)); len(p.Data) != 50 || p.NextPageToken != nil || p.TotalItems != n {
		t.Errorf("last page: %d contacts, token %v, total %d", len(p.Data), p.NextPageToken, p.TotalItems)
	}
	if got := scanned(); got != 50 {
		t.Errorf("the last page examined %d records, want 50", got)
	}
	timed("GET", "/v1/contacts/"+id, "", 200)
	timed("PATCH", "/v1/contacts/"+id, `{"externalId":"moved"}`, 200)
	if p := decode(timed("GET", "/v1/contacts?externalIds=moved", "", 200)); len(p.Data) != 1 || p.Data[0].ID != id {
		t.Errorf("re-indexed externalId: %+v", p.Data)
	}
	for i := 0; i < 2000; i++ {
		e.mu.Lock()
		id := e.state.order[i*50].c.ID
		e.mu.Unlock()
		if w := serve(e, "DELETE", "/v1/contacts/"+id, ""); w.Code != 204 {
			t.Fatalf("delete: %d", w.Code)
		}
	}
	e.mu.Lock()
	live := e.state.live
	e.mu.Unlock()
	if got := live; got != n-2000 {
		t.Errorf("%d contacts after deleting 2000", got)
	}
	t.Logf("slowest call: %v (wall clock, for information)", slowest)
}
