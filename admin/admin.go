// Package admin is syncd's operator interface over HTTP: liveness and
// readiness, status, and the actions an operator takes on a running
// daemon (a resync, for now). It listens on the loopback address by
// default; anything that changes state requires the configured bearer
// token.
package admin

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/reconcile"
)

// Daemon is what the admin server needs of a running syncd.
type Daemon interface {
	// Resync runs a resync of one connector, or of all when name is "".
	Resync(ctx context.Context, name string, o reconcile.ResyncOptions) ([]reconcile.Summary, error)
}

// ResyncRequest is the body of POST /resync.
type ResyncRequest struct {
	Connector string `json:"connector,omitempty"`
	DryRun    bool   `json:"dryRun,omitempty"`
}

// ResyncResponse is its answer.
type ResyncResponse struct {
	Summaries []reconcile.Summary   `json:"summaries"`
	Plan      []reconcile.PlanEntry `json:"plan,omitempty"`
	Error     string                `json:"error,omitempty"`
}

// Server serves the admin API.
type Server struct {
	Daemon Daemon
	// Token, when set, is required as a bearer token on every call that
	// changes state.
	Token string
	Log   *logrus.Entry
}

// Handler returns the server's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.Handle("POST /resync", s.authorized(http.HandlerFunc(s.resync)))
	return mux
}

// authorized refuses a request without the bearer token (when one is set).
func (s *Server) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) != 1 {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing or wrong bearer token (admin.token)"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) resync(w http.ResponseWriter, r *http.Request) {
	var req ResyncRequest
	if r.ContentLength != 0 {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid JSON body: " + err.Error()})
			return
		}
	}
	var resp ResyncResponse
	o := reconcile.ResyncOptions{DryRun: req.DryRun, Plan: func(e reconcile.PlanEntry) { resp.Plan = append(resp.Plan, e) }}
	sums, err := s.Daemon.Resync(r.Context(), req.Connector, o)
	resp.Summaries = sums
	status := http.StatusOK
	if err != nil {
		resp.Error = err.Error()
		status = http.StatusInternalServerError
		if errors.Is(err, ErrUnknownConnector) {
			status = http.StatusNotFound
		}
	}
	writeJSON(w, status, resp)
}

// ErrUnknownConnector is returned by a Daemon for a name it does not know.
var ErrUnknownConnector = errors.New("unknown connector")

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
