package admin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/internal/logfield"
)

// With admin.token set, everything that shows records (the health page,
// GET /deadletters, GET /conflicts) needs the token, as the calls that
// change state do: a dead letter carries a record's data. A program sends
// it as a bearer token; the health page asks for it once (a form POSTed to
// the page itself) and keeps, in an HttpOnly, SameSite=Strict cookie, a
// value derived from the token (an HMAC, never the token itself). A new
// token ends every such session. Liveness, readiness, metrics and /status
// (which shows no record) stay open.

// sessionCookie is the name of the health page's cookie.
const sessionCookie = "syncd_admin"

// sessionMaxAge is how long the browser keeps the cookie.
const sessionMaxAge = 30 * 24 * time.Hour

// sessionValue is the cookie's value for the configured token.
func (s *Server) sessionValue() string {
	mac := hmac.New(sha256.New, []byte(s.Token))
	mac.Write([]byte("syncd admin page session v1"))
	return hex.EncodeToString(mac.Sum(nil))
}

// hasSession reports whether r carries the page's cookie for the current
// token.
func (s *Server) hasSession(r *http.Request) bool {
	c, err := r.Cookie(sessionCookie)
	return err == nil && hmac.Equal([]byte(c.Value), []byte(s.sessionValue()))
}

// hasBearer reports whether r carries the token as a bearer token.
func (s *Server) hasBearer(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && s.tokenMatches(got)
}

// mayRead reports whether r may see records: always when no token is set
// (the admin API then listens on loopback only), else with the bearer
// token or the page's cookie.
func (s *Server) mayRead(r *http.Request) bool {
	return s.Token == "" || s.hasBearer(r) || s.hasSession(r)
}

// records refuses a request for records without the token (see mayRead).
func (s *Server) records(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.mayRead(r) {
			s.log().WithFields(logrus.Fields{logfield.Path: r.URL.Path, logfield.Remote: r.RemoteAddr}).Warn("admin read refused: missing or wrong bearer token")
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token (admin.token): this endpoint shows records")
			return
		}
		next(w, r)
	})
}

var loginTemplate = template.Must(template.New("login.html").ParseFS(pageFS, "login.html"))

// askToken answers the health page's request without the cookie: a form
// asking for the token, and nothing of the records.
func (s *Server) askToken(w http.ResponseWriter, refused bool) {
	setPageHeaders(w)
	w.WriteHeader(http.StatusUnauthorized)
	if err := loginTemplate.Execute(w, struct{ Refused bool }{refused}); err != nil {
		s.log().WithError(err).Error("health page login could not be rendered")
	}
}

// login takes the token from the page's form: right, it sets the cookie
// and sends the browser back to the page; wrong, it asks again.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "unreadable form", http.StatusBadRequest)
		return
	}
	if s.Token == "" {
		redirectPage(w)
		return
	}
	if !s.tokenMatches(r.PostForm.Get("token")) {
		s.log().WithFields(logrus.Fields{logfield.Remote: r.RemoteAddr}).Warn("health page login refused: wrong admin token")
		s.askToken(w, true)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: s.sessionValue(), MaxAge: int(sessionMaxAge.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	s.log().WithFields(logrus.Fields{logfield.Remote: r.RemoteAddr}).Info("health page opened with the admin token")
	redirectPage(w)
}

// redirectPage answers 303 to the page itself (post/redirect/get).
func redirectPage(w http.ResponseWriter) {
	w.Header().Set("Location", "./")
	w.WriteHeader(http.StatusSeeOther)
}

// setPageHeaders sets the health page's headers: no scripts, styles only
// inline, no framing by other sites, no caching.
func setPageHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
