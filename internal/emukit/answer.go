package emukit

import (
	"encoding/json"
	"net/http"
)

// Answer is a test server's response to one request, computed under the
// server's lock and written after it.
type Answer struct {
	Status int
	// Header holds the answer's own headers (rate limits, Retry-After);
	// nil for none.
	Header http.Header
	// Body is encoded as JSON; nil for no body.
	Body any
}

// SetHeader sets one of the answer's headers.
func (a *Answer) SetHeader(key, value string) {
	if a.Header == nil {
		a.Header = http.Header{}
	}
	a.Header.Set(key, value)
}

// Write writes the answer to w: its headers, Content-Type contentType
// when it has a body, its status and its body.
func (a Answer) Write(w http.ResponseWriter, contentType string) {
	for k, vs := range a.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if a.Body == nil {
		w.WriteHeader(a.Status)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(a.Status)
	_ = json.NewEncoder(w).Encode(a.Body)
}
