package emulator_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace/emulator"
)

func TestRateLimit(t *testing.T) {
	s := newServer(t, emulator.Options{Rate: 1, Burst: 5})
	var statuses []int
	for i := 0; i < 8; i++ {
		statuses = append(statuses, call(t, s.URL, "GET", "/v1/contacts", nil).status)
	}
	want := []int{200, 200, 200, 200, 200, 429, 429, 429}
	if !reflect.DeepEqual(statuses, want) {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
	r := call(t, s.URL, "GET", "/v1/contacts", nil)
	eb := errorBody(t, r, http.StatusTooManyRequests)
	if eb.Code != "0400429" || eb.Title != "Too Many Requests" || r.header.Get("Retry-After") != "" {
		t.Errorf("429: %+v, Retry-After %q", eb, r.header.Get("Retry-After"))
	}
	// Each key has its own bucket.
	if r := call(t, s.URL, "GET", "/v1/contacts", nil, "Authorization", readOnlyKey); r.status != 200 {
		t.Errorf("other key throttled: %d", r.status)
	}
	st := s.Stats()
	if st.Throttled != 4 || st.Requests["GET /v1/contacts"] != 10 || st.Faults != 0 {
		t.Errorf("stats = %+v, want 4 throttled of 10 requests", st)
	}
	// The bucket refills at the rate.
	time.Sleep(1100 * time.Millisecond)
	if r := call(t, s.URL, "GET", "/v1/contacts", nil); r.status != 200 {
		t.Errorf("after refill: %d", r.status)
	}
}

func TestRateLimitRetryAfter(t *testing.T) {
	s := newServer(t, emulator.Options{Rate: 0.5, Burst: 1, RetryAfter: true})
	call(t, s.URL, "GET", "/v1/contacts", nil)
	r := call(t, s.URL, "GET", "/v1/contacts", nil)
	if r.status != 429 || r.header.Get("Retry-After") != "2" {
		t.Errorf("status %d Retry-After %q, want 429 and 2", r.status, r.header.Get("Retry-After"))
	}
}

// outcome classifies an answer for the fault tests: the status, "lost"
// for a connection closed without an answer, "+slow" for a latency fault
// (told by the emulator's fault header, and checked to be slow).
func outcome(t *testing.T, base, method, path string, body any, slow time.Duration) string {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, base+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", testKey)
	req.Header.Set(versionName, versionValue)
	// A fresh connection each time, so that the transport never replays
	// a request whose answer was lost.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return "lost"
	}
	resp.Body.Close()
	o := fmt.Sprint(resp.StatusCode)
	if resp.Header.Get(emulator.FaultHeader) == "latency" {
		if time.Since(start) < slow {
			t.Errorf("latency fault answered after %v, want at least %v", time.Since(start), slow)
		}
		o += "+slow"
	}
	return o
}

func TestFaultsReproducibleBySeed(t *testing.T) {
	run := func(seed int64) ([]string, emulator.Stats) {
		s := newServer(t, emulator.Options{Seed: seed, FaultRate: 0.5, FaultLatency: 40 * time.Millisecond})
		var out []string
		for i := 0; i < 40; i++ {
			out = append(out, outcome(t, s.URL, "GET", "/v1/contact-custom-fields", nil, 40*time.Millisecond))
		}
		return out, s.Stats()
	}
	a, sa := run(7)
	b, _ := run(7)
	c, _ := run(8)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different faults:\n%v\n%v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("seeds 7 and 8 gave the same faults: %v", a)
	}
	count := map[string]int{}
	for _, o := range a {
		count[o]++
	}
	if count["500"] == 0 || count["429"] == 0 || count["200+slow"] == 0 || count["lost"] == 0 || count["200"] == 0 {
		t.Errorf("outcomes %v: want every kind of fault and some successes", count)
	}
	if sa.Faults != 40-count["200"] || sa.FaultsByKind["lost"] != count["lost"] || sa.FaultsByKind["500"] != count["500"] || sa.Throttled != 0 {
		t.Errorf("stats %+v do not match outcomes %v", sa, count)
	}
}

// TestLostAnswerAppliesWrite: with every request faulted, a create whose
// answer is lost exists all the same, an injected 500 or 429 applies
// nothing, and a slow one applies normally; the same holds for PATCH and
// DELETE.
func TestLostAnswerAppliesWrite(t *testing.T) {
	s := newServer(t, emulator.Options{Seed: 3, FaultRate: 1, FaultLatency: time.Millisecond})
	exists := func(name string) bool {
		for _, c := range s.Contacts() {
			if *c.DefaultFields.FirstName == name {
				return true
			}
		}
		return false
	}
	seen := map[string]int{}
	for i := 0; i < 60 && (seen["lost"] < 2 || seen["500"] == 0 || seen["429"] == 0); i++ {
		name := fmt.Sprintf("p%d", i)
		o := strings.TrimSuffix(outcome(t, s.URL, "POST", "/v1/contacts", person(name, nil), time.Millisecond), "+slow")
		seen[o]++
		switch o {
		case "lost", "201":
			if !exists(name) {
				t.Errorf("create %s answered %s but was not applied", name, o)
			}
		case "500", "429":
			if exists(name) {
				t.Errorf("create %s answered %s but was applied", name, o)
			}
		default:
			t.Fatalf("unexpected outcome %s", o)
		}
	}
	if seen["lost"] < 2 {
		t.Fatalf("outcomes %v: no lost answer", seen)
	}
	// PATCH and DELETE whose answer is lost are applied too.
	s.SetFaultRate(0)
	c := createContact(t, s.URL, person("target", nil))
	s.SetFaultRate(1)
	for i := 0; ; i++ {
		o := outcome(t, s.URL, "PATCH", "/v1/contacts/"+c.ID, map[string]any{"defaultFields": map[string]any{"lastName": fmt.Sprint(i)}}, time.Millisecond)
		if o == "lost" {
			for _, x := range s.Contacts() {
				if x.ID == c.ID && (x.DefaultFields.LastName == nil || *x.DefaultFields.LastName != fmt.Sprint(i)) {
					t.Errorf("lost PATCH not applied: %+v", x.DefaultFields)
				}
			}
			break
		}
		if i > 40 {
			t.Fatal("no lost PATCH")
		}
	}
	for i := 0; ; i++ {
		o := outcome(t, s.URL, "DELETE", "/v1/contacts/"+c.ID, nil, time.Millisecond)
		if o == "lost" {
			if exists("target") {
				t.Error("lost DELETE not applied")
			}
			break
		}
		if o == "404" || i > 40 {
			t.Fatalf("no lost DELETE before %s", o)
		}
	}
}

func TestLatency(t *testing.T) {
	s := newServer(t, emulator.Options{Latency: 60 * time.Millisecond})
	start := time.Now()
	call(t, s.URL, "GET", "/v1/contacts", nil)
	if d := time.Since(start); d < 60*time.Millisecond {
		t.Errorf("answer after %v, want at least 60ms", d)
	}
	start = time.Now()
	call(t, s.URL, "GET", "/_emulator/stats", nil)
	if d := time.Since(start); d >= 60*time.Millisecond {
		t.Errorf("back door answered after %v: latency applies to the API only", d)
	}
}
