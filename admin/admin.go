// Package admin is syncd's operator interface over HTTP: liveness and
// readiness, metrics, status, the sync health page, and the actions an
// operator takes on a running daemon (a resync, a dead letter retried or
// dropped, a backup of the state file).
//
// It listens on the loopback address by default. Health, readiness,
// metrics and status need no token; with admin.token set, everything that
// shows records (dead letters, conflicts, the health page: see
// session.go), every call that changes state, and the backup (the state
// file holds the webhook signing secrets) require it. With no
// token configured (allowed on loopback only), state-changing calls are
// accepted only from the same origin: a browser's cross-site request
// (Origin or Sec-Fetch-Site says so) is refused, and so is a Host that is
// not a loopback name, which defeats DNS rebinding.
package admin

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

// Daemon is what the admin server needs of a running syncd.
type Daemon interface {
	// Resync runs a resync of one connector, or of all when name is "".
	Resync(ctx context.Context, name string, o reconcile.ResyncOptions) ([]reconcile.Summary, error)
	// Status describes every connector.
	Status(ctx context.Context) (Status, error)
	// Ready runs the readiness checks.
	Ready(ctx context.Context) []Check
	// DeadLetters lists the connector's dead letters ("" for all).
	DeadLetters(connector string) ([]DeadLetter, error)
	// RetryDeadLetter runs the letter's record through its connector now;
	// state.ErrNotFound when there is no such letter, ErrNotRetryable
	// when its kind cannot be retried.
	RetryDeadLetter(ctx context.Context, id uint64) (RetryResponse, error)
	// DropDeadLetter forgets the letter; state.ErrNotFound when none.
	DropDeadLetter(id uint64) error
	// FieldWarnings lists the connector's field warnings ("" for all).
	FieldWarnings(connector string) ([]FieldWarning, error)
	// Conflicts lists up to limit of the connector's conflicts ("" for
	// all), newest first.
	Conflicts(connector string, limit int) ([]Conflict, error)
	// Backup writes a consistent copy of the state file to w.
	Backup(w io.Writer) (int64, error)
}

// Errors a Daemon returns.
var (
	// ErrUnknownConnector is returned for a connector name it does not know.
	ErrUnknownConnector = errors.New("unknown connector")
	// ErrNotRetryable is returned for a dead letter no retry can apply.
	ErrNotRetryable = errors.New("dead letter cannot be retried")
)

// ResyncRequest is the body of POST /resync.
type ResyncRequest struct {
	Connector string `json:"connector,omitempty"`
	DryRun    bool   `json:"dryRun,omitempty"`
	// AllowMassDelete lets the resync delete more than the connector's
	// massDeleteThreshold (syncd resync --allow-mass-delete).
	AllowMassDelete bool `json:"allowMassDelete,omitempty"`
	// AllowMassRekey lets a resync that looks like a change of the
	// source's ids go on (syncd resync --allow-mass-rekey).
	AllowMassRekey bool `json:"allowMassRekey,omitempty"`
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
	// changes state or shows records; the health page asks for it once
	// and keeps a cookie derived from it (session.go).
	Token string
	// Metrics serves GET /metrics; nil answers 404.
	Metrics http.Handler
	// Context bounds the work the health page's buttons start in the
	// background (a resync outlives the request that asked for it); it
	// should end with the daemon. Default context.Background().
	Context context.Context
	Log     *logrus.Entry
}

func (s *Server) log() *logrus.Entry {
	if s.Log == nil {
		return logrus.NewEntry(logrus.StandardLogger()).WithField(logfield.Component, "admin")
	}
	return s.Log.WithField(logfield.Component, "admin")
}

func (s *Server) context() context.Context {
	if s.Context == nil {
		return context.Background()
	}
	return s.Context
}

// Handler returns the server's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if s.Metrics == nil {
			writeError(w, http.StatusNotFound, "metrics are not enabled")
			return
		}
		s.Metrics.ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /status", s.status)
	mux.Handle("POST /resync", s.authorized(http.HandlerFunc(s.resync)))
	mux.Handle("GET /deadletters", s.records(s.deadLetters))
	mux.Handle("POST /deadletters/{id}/retry", s.authorized(http.HandlerFunc(s.retryDeadLetter)))
	mux.Handle("POST /deadletters/{id}/drop", s.authorized(http.HandlerFunc(s.dropDeadLetter)))
	mux.Handle("GET /fieldwarnings", s.records(s.fieldWarnings))
	mux.Handle("GET /conflicts", s.records(s.conflicts))
	mux.Handle("GET /state/backup", s.authorized(http.HandlerFunc(s.backup)))
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("POST /{$}", s.login)
	mux.HandleFunc("POST /ui/resync", s.uiResync)
	mux.HandleFunc("POST /ui/deadletters/{id}/{action}", s.uiDeadLetter)
	s.heldDeleteRoutes(mux)
	s.matchRoutes(mux)
	return mux
}

// authorized refuses a request without the bearer token (when one is
// set), or a cross-origin one (when none is).
func (s *Server) authorized(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Token != "" {
			if !s.hasBearer(r) {
				s.log().WithFields(logrus.Fields{logfield.Path: r.URL.Path, logfield.Remote: r.RemoteAddr}).Warn("admin call refused: missing or wrong bearer token")
				writeError(w, http.StatusUnauthorized, "missing or wrong bearer token (admin.token)")
				return
			}
		} else if reason := crossOrigin(r); reason != "" {
			s.log().WithFields(logrus.Fields{logfield.Path: r.URL.Path, logfield.Remote: r.RemoteAddr, logfield.Reason: reason}).Warn("admin call refused: not same-origin")
			writeError(w, http.StatusForbidden, "refused: "+reason)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tokenMatches(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(s.Token)) == 1
}

// crossOrigin returns why r may come from another site ("" when it does
// not): what protects state-changing calls when no token is configured.
func crossOrigin(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return "cross-site request (Sec-Fetch-Site: " + site + ")"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || o == "null" || !strings.EqualFold(u.Host, r.Host) {
			return "request from another origin"
		}
	}
	if !loopbackHost(r.Host) {
		return "with no admin.token set, only a loopback Host (127.0.0.1, ::1, localhost) may change state"
	}
	return ""
}

// loopbackHost reports whether a Host header names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	checks := s.Daemon.Ready(r.Context())
	res := Readiness{Ready: true, Checks: checks}
	for _, c := range checks {
		res.Ready = res.Ready && c.OK
	}
	status := http.StatusOK
	if !res.Ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, res)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	st, err := s.Daemon.Status(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) resync(w http.ResponseWriter, r *http.Request) {
	var req ResyncRequest
	if r.ContentLength != 0 {
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
			return
		}
	}
	s.log().WithFields(logrus.Fields{logfield.Connector: req.Connector, logfield.DryRun: req.DryRun, logfield.Remote: r.RemoteAddr}).Info("resync requested")
	var resp ResyncResponse
	o := reconcile.ResyncOptions{DryRun: req.DryRun, AllowMassDelete: req.AllowMassDelete, AllowMassRekey: req.AllowMassRekey, Plan: func(e reconcile.PlanEntry) { resp.Plan = append(resp.Plan, e) }}
	sums, err := s.Daemon.Resync(r.Context(), req.Connector, o)
	resp.Summaries = sums
	status := http.StatusOK
	if err != nil {
		resp.Error = err.Error()
		status = errorStatus(err)
	}
	writeJSON(w, status, resp)
}

func (s *Server) deadLetters(w http.ResponseWriter, r *http.Request) {
	dls, err := s.Daemon.DeadLetters(r.URL.Query().Get("connector"))
	if err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	if dls == nil {
		dls = []DeadLetter{}
	}
	writeJSON(w, http.StatusOK, dls)
}

// fieldWarnings lists field warnings; they hold record values, so they
// need the token like the other record endpoints (see records).
func (s *Server) fieldWarnings(w http.ResponseWriter, r *http.Request) {
	ws, err := s.Daemon.FieldWarnings(r.URL.Query().Get("connector"))
	if err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	if ws == nil {
		ws = []FieldWarning{}
	}
	writeJSON(w, http.StatusOK, ws)
}

// pathID reads the {id} of the path.
func pathID(w http.ResponseWriter, r *http.Request) (uint64, bool) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		writeError(w, http.StatusBadRequest, "dead letter id must be a positive number")
		return 0, false
	}
	return id, true
}

func (s *Server) retryDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	s.log().WithFields(logrus.Fields{logfield.DeadLetter: id, logfield.Remote: r.RemoteAddr}).Info("dead letter retry requested")
	resp, err := s.Daemon.RetryDeadLetter(r.Context(), id)
	status := http.StatusOK
	if err != nil {
		resp.Error = err.Error()
		status = errorStatus(err)
	}
	writeJSON(w, status, resp)
}

func (s *Server) dropDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	if err := s.Daemon.DropDeadLetter(id); err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	s.log().WithFields(logrus.Fields{logfield.DeadLetter: id, logfield.Remote: r.RemoteAddr}).Info("dead letter dropped")
	writeJSON(w, http.StatusOK, map[string]any{"dropped": id})
}

func (s *Server) conflicts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "limit must be a number >= 0 (0: all)")
			return
		}
		limit = n
	}
	cs, err := s.Daemon.Conflicts(q.Get("connector"), limit)
	if err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	if cs == nil {
		cs = []Conflict{}
	}
	writeJSON(w, http.StatusOK, cs)
}

// backup streams a consistent copy of the state file. A failure after
// the first byte cannot change the status: it cuts the answer short,
// which the client sees as a length mismatch.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="syncd-state.db"`)
	n, err := s.Daemon.Backup(w)
	log := s.log().WithFields(logrus.Fields{logfield.Bytes: n, logfield.Remote: r.RemoteAddr})
	if err != nil {
		log.WithError(err).Error("state backup failed")
		if n == 0 {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		panic(http.ErrAbortHandler) // cut the connection: the copy is incomplete
	}
	log.Info("state backup served")
}

// errorStatus maps a Daemon error to an HTTP status.
func errorStatus(err error) int {
	switch {
	case errors.Is(err, ErrUnknownConnector), errors.Is(err, state.ErrNotFound), errors.Is(err, reconcile.ErrNotHeld):
		return http.StatusNotFound
	case errors.Is(err, ErrNotRetryable):
		return http.StatusConflict
	default:
		return http.StatusInternalServerError
	}
}

// errorBody is the body of every error answer.
type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
