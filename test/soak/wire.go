package soak

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// Call is a write syncd sent to the workspace API, or a webhook delivery
// the workspace sent to syncd, with when it was answered.
type Call struct {
	At time.Time
	// Kind is "api" (syncd's write) or "delivery".
	Kind    string
	Method  string // of an API write
	Path    string
	Contact string
	Status  int // 0: transport error or dropped answer
	Fault   string
	// Values are the contact fields the body carries (an API write's
	// defaultFields, a delivery's contact).
	Values map[string]string
	// Before are the contact's fields just before an API PATCH.
	Before map[string]string
	Body   string
}

// Wire records syncd's write calls to the workspace API and the
// deliveries to syncd, for the timelines of the report and the writes
// after the edits stop.
type Wire struct {
	// Contact reads a contact's fields as the workspace holds them (nil:
	// API writes are recorded without Before).
	Contact func(id string) map[string]string
	mu      sync.Mutex
	calls   []Call
}

// Calls returns the recorded calls from since on.
func (w *Wire) Calls(since time.Time) []Call {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Call
	for _, c := range w.calls {
		if !c.At.Before(since) {
			out = append(out, c)
		}
	}
	return out
}

func (w *Wire) add(c Call) {
	w.mu.Lock()
	w.calls = append(w.calls, c)
	w.mu.Unlock()
}

// Handler records h's answers to writes of /v1/contacts (the app's back
// door is in the edit log).
func (w *Wire) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || !strings.HasPrefix(r.URL.Path, "/v1/contacts") {
			h.ServeHTTP(rw, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		id := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, "/v1/contacts"), "/")
		var before map[string]string
		if r.Method == http.MethodPatch && w.Contact != nil {
			before = w.Contact(id)
		}
		rec := &status{ResponseWriter: rw, code: http.StatusOK}
		h.ServeHTTP(rec, r)
		c := Call{At: time.Now(), Before: before, Kind: "api", Method: r.Method, Path: r.URL.Path, Status: rec.code, Fault: rec.Header().Get("Emulator-Fault"),
			Contact: id, Body: string(body)}
		var in struct {
			DefaultFields map[string]any `json:"defaultFields"`
		}
		if json.Unmarshal(body, &in) == nil {
			c.Values = fieldValues(in.DefaultFields)
		}
		if rec.hijacked {
			c.Status, c.Fault = 0, "lost"
		}
		w.add(c)
	})
}

// Transport records the deliveries sent through it.
func (w *Wire) Transport() http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		resp, err := http.DefaultTransport.RoundTrip(r)
		c := Call{At: time.Now(), Kind: "delivery"}
		if resp != nil {
			c.Status = resp.StatusCode
		}
		var ev workspace.Event
		if json.Unmarshal(body, &ev) == nil {
			var ct struct {
				ID            string         `json:"id"`
				DefaultFields map[string]any `json:"defaultFields"`
			}
			payload, _ := ev.Data.Payload()
			_ = json.Unmarshal(payload, &ct)
			c.Contact, c.Values, c.Method, c.Path = ct.ID, fieldValues(ct.DefaultFields), ev.Type, ev.ID
		}
		w.add(c)
		return resp, err
	})
}

// fieldValues picks the soak's Fields out of a defaultFields object.
func fieldValues(df map[string]any) map[string]string {
	out := map[string]string{}
	for _, f := range Fields {
		if s, ok := df[f].(string); ok {
			out[f] = s
		}
	}
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// status remembers the answer's status code and a dropped connection.
type status struct {
	http.ResponseWriter
	code     int
	hijacked bool
}

func (s *status) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

// Hijack lets the emulator drop the connection (its lost answers).
func (s *status) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	s.hijacked = true
	hj, ok := s.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	return hj.Hijack()
}
