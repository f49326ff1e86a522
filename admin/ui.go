package admin

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/reconcile"
)

// The sync health page (GET /) is rendered on the server with
// html/template, which escapes every value (a dead letter's reason comes
// from other systems' answers). It needs no JavaScript and uses only
// relative URLs, so it works from any host and behind a proxy that serves
// it under a path prefix.
//
// Its buttons (resync a connector or all, retry or drop a dead letter)
// are plain form POSTs to /ui/...; each answers with a redirect back to
// the page (post/redirect/get: reloading does not repeat the action).
// They are protected as follows:
//
//   - with admin.token set, the form carries a password field and the
//     server requires it to equal the token (a browser cannot send a
//     bearer header from a form; the token never appears in a URL);
//   - without a token (the admin API then listens on loopback only), a
//     POST is accepted only from the same origin, as for the JSON API:
//     cross-site requests (Origin, Sec-Fetch-Site) and non-loopback Host
//     headers are refused.
//
// A resync started from the page runs in the background (it can take
// minutes); the page shows the connector as running until it ends.

//go:embed page.html login.html
var pageFS embed.FS

var pageTemplate = template.Must(template.New("page.html").Funcs(template.FuncMap{
	"when":     when,
	"ago":      ago,
	"duration": func(d time.Duration) string { return d.Round(time.Second).String() },
	"percent":  func(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" },
	"multi":    func(v string) string { return strings.ReplaceAll(v, "\x1f", ", ") },
	"sortedKeys": func(a, b map[string]string) []string {
		var keys []string
		for k := range a {
			keys = append(keys, k)
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		return keys
	},
}).ParseFS(pageFS, "page.html"))

// Limits of the page's lists; the CLI and the JSON API list everything.
const (
	pageDeadLetters = 100
	pageWarnings    = 100
	pageConflicts   = 20
)

// pageData is what page.html renders.
type pageData struct {
	Now           time.Time
	Status        Status
	StatusErr     string
	Ready         Readiness
	DeadLetters   []DeadLetter
	MoreDead      int
	DeadErr       string
	Warnings      []FieldWarning
	MoreWarnings  int
	WarningsErr   string
	Conflicts     []Conflict
	ConflictsErr  string
	Notice        string
	TokenRequired bool
	Running       []runningPass // see progress_ui.go
	Charts        *pageCharts
	ChartsErr     string
	Held          []heldGroup // held deletions (helddeletes.go)
	HeldErr       string
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	if !s.mayRead(r) {
		s.askToken(w, false)
		return
	}
	ctx := r.Context()
	// The buttons' forms carry the token unless the page's cookie does.
	d := pageData{Now: time.Now(), TokenRequired: s.Token != "" && !s.hasSession(r)}
	st, err := s.Daemon.Status(ctx)
	if err != nil {
		d.StatusErr = err.Error()
	}
	d.Status = st
	d.Ready = Readiness{Ready: true, Checks: s.Daemon.Ready(ctx)}
	for _, c := range d.Ready.Checks {
		d.Ready.Ready = d.Ready.Ready && c.OK
	}
	if dls, err := s.Daemon.DeadLetters(""); err != nil {
		d.DeadErr = err.Error()
	} else {
		// Newest first: the latest failures are what an operator looks at.
		slices.SortStableFunc(dls, func(a, b DeadLetter) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
		if len(dls) > pageDeadLetters {
			d.MoreDead = len(dls) - pageDeadLetters
			dls = dls[:pageDeadLetters]
		}
		d.DeadLetters = dls
	}
	if ws, err := s.Daemon.FieldWarnings(""); err != nil {
		d.WarningsErr = err.Error()
	} else {
		// Newest first, as the dead letters.
		slices.SortStableFunc(ws, func(a, b FieldWarning) int { return b.CreatedAt.Compare(a.CreatedAt) })
		if len(ws) > pageWarnings {
			d.MoreWarnings = len(ws) - pageWarnings
			ws = ws[:pageWarnings]
		}
		d.Warnings = ws
	}
	if cs, err := s.Daemon.Conflicts("", pageConflicts); err != nil {
		d.ConflictsErr = err.Error()
	} else {
		d.Conflicts = cs
	}
	if hd, ok := s.Daemon.(HeldDeleter); ok {
		if hs, err := hd.HeldDeletes(""); err != nil {
			d.HeldErr = err.Error()
		} else {
			d.Held = heldGroups(hs)
		}
	}
	d.Notice = notice(r.URL.Query(), st)
	d.Running = runningPasses(st)
	if d.Charts, err = s.charts(ctx, d.Now); err != nil {
		d.ChartsErr = err.Error()
	}
	setPageHeaders(w)
	if err := pageTemplate.Execute(w, d); err != nil {
		s.log().WithError(err).Error("health page could not be rendered")
	}
}

// notice is the message shown after a button's redirect. Only known
// notices with checked arguments are shown: the page never echoes free
// text from its URL.
func notice(q url.Values, st Status) string {
	known := func(name string) bool {
		return slices.ContainsFunc(st.Connectors, func(c ConnectorStatus) bool { return c.Name == name })
	}
	id, _ := strconv.ParseUint(q.Get("id"), 10, 64)
	switch q.Get("notice") {
	case "resync":
		if c := q.Get("connector"); c == "" {
			return "Resync of every connector started. It runs in the background; reload this page to follow it."
		} else if known(c) {
			return fmt.Sprintf("Resync of %s started. It runs in the background; reload this page to follow it.", c)
		}
	case "retry":
		if id > 0 {
			return fmt.Sprintf("Retry of dead letter %d started. Reload this page: it is gone from the list once the record went through.", id)
		}
	case "drop":
		if id > 0 {
			return fmt.Sprintf("Dead letter %d dropped.", id)
		}
	case "deletes-approve":
		if c := q.Get("connector"); known(c) {
			return fmt.Sprintf("The held deletions of %s were approved: their records are deleted.", c)
		}
	case "deletes-drop":
		if c := q.Get("connector"); known(c) {
			return fmt.Sprintf("The held deletions of %s were dropped: their records stay.", c)
		}
	case "refused":
		return "Refused: the admin token is missing or wrong."
	}
	return ""
}

// formAllowed checks a button's POST: the token form field when a token
// is set, the same origin otherwise. It answers the refusal itself.
func (s *Server) formAllowed(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "unreadable form", http.StatusBadRequest)
		return false
	}
	log := s.log().WithFields(logrus.Fields{logfield.Path: r.URL.Path, logfield.Remote: r.RemoteAddr})
	if s.Token == "" {
		if reason := crossOrigin(r); reason != "" {
			log.WithField(logfield.Reason, reason).Warn("health page action refused: not same-origin")
			http.Error(w, "refused: "+reason+"; set admin.token to use the buttons from other hosts", http.StatusForbidden)
			return false
		}
		return true
	}
	if s.hasSession(r) {
		// The cookie is SameSite=Strict; refuse what a browser marks as
		// cross-site anyway.
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
			log.WithField(logfield.Reason, "cross-site").Warn("health page action refused: not same-origin")
			http.Error(w, "refused: cross-site request", http.StatusForbidden)
			return false
		}
		return true
	}
	if !s.tokenMatches(r.PostForm.Get("token")) {
		log.Warn("health page action refused: missing or wrong admin token")
		redirect(w, "refused", nil)
		return false
	}
	return true
}

// redirect answers 303 to the health page with a notice; the Location is
// relative to /ui/..., so the page works under any path prefix.
func redirect(w http.ResponseWriter, notice string, args url.Values) {
	q := url.Values{"notice": {notice}}
	for k, v := range args {
		q[k] = v
	}
	w.Header().Set("Location", "../?"+q.Encode())
	w.WriteHeader(http.StatusSeeOther)
}

func (s *Server) uiResync(w http.ResponseWriter, r *http.Request) {
	if !s.formAllowed(w, r) {
		return
	}
	name := r.PostForm.Get("connector")
	if name != "" {
		st, err := s.Daemon.Status(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if !slices.ContainsFunc(st.Connectors, func(c ConnectorStatus) bool { return c.Name == name }) {
			http.Error(w, "unknown connector", http.StatusNotFound)
			return
		}
	}
	log := s.log().WithFields(logrus.Fields{logfield.Connector: name, logfield.Remote: r.RemoteAddr})
	log.Info("resync requested from the health page")
	go func() {
		sums, err := s.Daemon.Resync(s.context(), name, reconcile.ResyncOptions{})
		if err != nil {
			log.WithError(err).Error("resync from the health page stopped early")
			return
		}
		log.WithField(logfield.Connectors, len(sums)).Info("resync from the health page finished")
	}()
	redirect(w, "resync", url.Values{"connector": {name}})
}

func (s *Server) uiDeadLetter(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok || !s.formAllowed(w, r) {
		return
	}
	log := s.log().WithFields(logrus.Fields{logfield.DeadLetter: id, logfield.Remote: r.RemoteAddr})
	switch action := r.PathValue("action"); action {
	case "retry":
		log.Info("dead letter retry requested from the health page")
		go func() {
			res, err := s.Daemon.RetryDeadLetter(s.context(), id)
			if err != nil {
				log.WithError(err).Warn("dead letter retry from the health page failed")
				return
			}
			log.WithField(logfield.Resolved, res.Resolved).Info("dead letter retried from the health page")
		}()
		redirect(w, "retry", url.Values{"id": {strconv.FormatUint(id, 10)}})
	case "drop":
		if err := s.Daemon.DropDeadLetter(id); err != nil {
			http.Error(w, err.Error(), errorStatus(err))
			return
		}
		log.Info("dead letter dropped from the health page")
		redirect(w, "drop", url.Values{"id": {strconv.FormatUint(id, 10)}})
	default:
		http.Error(w, "unknown action "+strconv.Quote(action), http.StatusNotFound)
	}
}

// when formats a time for the page ("never" when zero).
func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

// ago says how long before now t was.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in " + (-d).Round(time.Second).String()
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm ago", int(d.Hours()), int(d.Minutes())%60)
	default:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
}
