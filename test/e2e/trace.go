package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Trace records the write requests an emulator serves and the webhook
// deliveries it sends, with their bodies, to explain a failed run.
type Trace struct {
	mu    sync.Mutex
	lines []string
}

func (t *Trace) add(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, time.Now().Format("15:04:05.000000")+" "+fmt.Sprintf(format, args...))
}

// Add records a line.
func (t *Trace) Add(line string) { t.add("%s", line) }

// Matching returns the recorded lines containing s.
func (t *Trace) Matching(s string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range t.lines {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// Handler wraps an emulator's handler: every request but GET is
// recorded with its body and the answer's status and body.
func (t *Trace) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		t.add("api %s %s %s -> %d %s", r.Method, r.URL.Path, body, rec.status, rec.body.String())
	})
}

// Transport records the webhook deliveries sent through it.
func (t *Trace) Transport() http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		var body []byte
		if r.Body != nil {
			body, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		resp, err := http.DefaultTransport.RoundTrip(r)
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.add("delivery %s -> %d %v", body, status, err)
		return resp, err
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(s int) {
	r.status = s
	r.ResponseWriter.WriteHeader(s)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.body.Len() < 2000 {
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// Hijack lets the emulator drop the connection (its lost answers),
// recorded as status 0.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	r.status = 0
	hj, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, http.ErrNotSupported
	}
	return hj.Hijack()
}
