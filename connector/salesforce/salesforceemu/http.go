package salesforceemu

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/syncd-io/syncd/internal/emukit"
)

// apiError is one entry of the REST API's error answer, a JSON array.
type apiError struct {
	Message   string   `json:"message"`
	ErrorCode string   `json:"errorCode"`
	Fields    []string `json:"fields,omitempty"`
}

// answer is a response computed under the server lock and written after it.
type answer = emukit.Answer

func errorAnswer(status int, code, msg string, fields ...string) answer {
	return answer{Status: status, Body: []apiError{{Message: msg, ErrorCode: code, Fields: fields}}}
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	answer{Status: status, Body: body}.Write(w, "application/json;charset=UTF-8")
}

// pathRE splits /services/data/vXX.X/rest.
var pathRE = regexp.MustCompile(`^/services/data/v([0-9]+)\.([0-9])(/.*)?$`)

// Versions served: sObject Collections came with 42.0; the newest is the
// one the connector defaults to and a few after it.
const minVersion, maxVersion = 42, 64

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, []apiError{{Message: "could not read the request body", ErrorCode: "JSON_PARSER_ERROR"}})
		return
	}
	m := pathRE.FindStringSubmatch(r.URL.Path)
	route, rest := RouteUnknown, ""
	if m != nil {
		rest = strings.TrimSuffix(m[3], "/")
		route = routeOf(r.Method, rest)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, limited := s.gateLocked(r)
	if !limited {
		switch {
		case m == nil:
			a = errorAnswer(http.StatusNotFound, "NOT_FOUND", "The requested resource does not exist")
		case !versionOK(m[1], m[2]):
			a = errorAnswer(http.StatusNotFound, "NOT_FOUND", "The requested resource does not exist")
		case len(s.faults[route]) > 0:
			a, s.faults[route] = s.faults[route][0], s.faults[route][1:]
		default:
			a = s.routeLocked(route, r, rest, body)
			if s.lose[route] > 0 {
				s.lose[route]--
				s.stats.Add(route, 0)
				loseAnswer(w)
				return
			}
		}
	}
	if a.Status != http.StatusUnauthorized {
		w.Header().Set("Sforce-Limit-Info", fmt.Sprintf("api-usage=%d/%d", s.used, s.opts.DailyLimit))
	}
	s.stats.Add(route, a.Status)
	writeJSON(w, a.Status, a.Body)
}

func versionOK(major, minor string) bool {
	n, err := strconv.Atoi(major)
	return err == nil && minor == "0" && n >= minVersion && n <= maxVersion
}

// gateLocked checks the session and the daily allowance and counts the
// call. It returns the refusal and true when the call may not proceed.
func (s *Server) gateLocked(r *http.Request) (answer, bool) {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(auth, "OAuth ")
	}
	sess := s.tokens[tok]
	if !ok || sess == nil || sess.expired {
		return errorAnswer(http.StatusUnauthorized, "INVALID_SESSION_ID", "Session expired or invalid"), true
	}
	if s.opts.SessionCalls > 0 && sess.calls >= s.opts.SessionCalls {
		sess.expired = true
		return errorAnswer(http.StatusUnauthorized, "INVALID_SESSION_ID", "Session expired or invalid"), true
	}
	if s.used >= s.opts.DailyLimit {
		return errorAnswer(http.StatusForbidden, "REQUEST_LIMIT_EXCEEDED", "TotalRequests Limit exceeded."), true
	}
	sess.calls++
	s.used++
	return answer{}, false
}

func routeOf(method, rest string) Route {
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	switch {
	case method == http.MethodGet && rest == "/query":
		return RouteQuery
	case method == http.MethodGet && rest == "/queryAll":
		return RouteQueryAll
	case method == http.MethodGet && len(parts) == 2 && (parts[0] == "query" || parts[0] == "queryAll"):
		return RouteQueryMore
	case method == http.MethodGet && len(parts) == 3 && parts[0] == "sobjects" && parts[2] == "describe":
		return RouteDescribe
	case method == http.MethodGet && len(parts) == 3 && parts[0] == "sobjects" && parts[2] == "deleted":
		return RouteDeleted
	case method == http.MethodGet && len(parts) == 3 && parts[0] == "sobjects" && parts[2] == "updated":
		return RouteUpdated
	case rest == "/composite/sobjects":
		switch method {
		case http.MethodPost:
			return RouteCreate
		case http.MethodPatch:
			return RouteUpdate
		case http.MethodDelete:
			return RouteDelete
		}
	}
	return RouteUnknown
}

func (s *Server) routeLocked(route Route, r *http.Request, rest string, body []byte) answer {
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	switch route {
	case RouteQuery, RouteQueryAll:
		return s.queryLocked(r, route == RouteQueryAll)
	case RouteQueryMore:
		return s.queryMoreLocked(parts[1], batchSize(r))
	case RouteDescribe:
		return s.describeLocked(parts[1])
	case RouteDeleted:
		return s.deletedLocked(parts[1], r)
	case RouteUpdated:
		return s.updatedLocked(parts[1], r)
	case RouteCreate:
		return s.createLocked(body)
	case RouteUpdate:
		return s.updateLocked(body)
	case RouteDelete:
		return s.deleteAPILocked(r)
	}
	if rest == "/composite/sobjects" {
		return errorAnswer(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
			fmt.Sprintf("HTTP Method '%s' not allowed. Allowed are GET,POST,PATCH,DELETE", r.Method))
	}
	return errorAnswer(http.StatusNotFound, "NOT_FOUND", "The requested resource does not exist")
}
