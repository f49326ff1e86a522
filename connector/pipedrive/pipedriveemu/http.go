package pipedriveemu

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/internal/emukit"
)

// answer is a response computed under the server lock and written after it.
type answer = emukit.Answer

// errorBody is Pipedrive's error answer.
type errorBody struct {
	Success   bool   `json:"success"`
	Error     string `json:"error"`
	ErrorInfo string `json:"error_info,omitempty"`
	Data      any    `json:"data"`
}

func ok(body any) answer { return answer{Status: http.StatusOK, Body: body} }

func fail(status int, msg string) answer {
	return answer{Status: status, Body: errorBody{Error: msg, ErrorInfo: "Please check developers.pipedrive.com for more information about Pipedrive API."}}
}

func badRequest(format string, args ...any) answer {
	return fail(http.StatusBadRequest, fmt.Sprintf(format, args...))
}

type notFoundError string

func (e notFoundError) Error() string { return "person " + string(e) + " not found" }

func errNotFound(id string) error { return notFoundError(id) }

// tokenCost is the documented cost of a request in tokens: single entity
// GET 2, list GET 20, search 40, create/update 10, delete 6.
func tokenCost(route Route) int64 {
	if n, found := activityCost(route); found {
		return n
	}
	switch route {
	case RouteGetPerson:
		return 2
	case RouteListPersons, RoutePersonFields, RouteListOrgs, RouteRecents:
		return 20
	case RouteSearchOrgs:
		return 40
	case RouteAddPerson, RouteUpdatePerson, RouteAddOrg, RouteMergePersons:
		return 10
	case RouteDeletePerson:
		return 6
	}
	return 0
}

func routeOf(r *http.Request) (Route, string) {
	p := strings.TrimRight(r.URL.Path, "/")
	if rt, id, found := activityRoute(r.Method, p); found {
		return rt, id
	}
	if rest, found := strings.CutPrefix(p, "/v1/persons/"); found && r.Method == http.MethodPut {
		if id, merge := strings.CutSuffix(rest, "/merge"); merge && id != "" && !strings.Contains(id, "/") {
			return RouteMergePersons, id
		}
	}
	if id, found := strings.CutPrefix(p, "/v1/webhooks/"); found && r.Method == http.MethodDelete && id != "" && !strings.Contains(id, "/") {
		return RouteDeleteWebhook, id
	}
	if id, found := strings.CutPrefix(p, "/api/v2/persons/"); found && !strings.Contains(id, "/") && id != "search" {
		switch r.Method {
		case http.MethodGet:
			return RouteGetPerson, id
		case http.MethodPatch:
			return RouteUpdatePerson, id
		case http.MethodDelete:
			return RouteDeletePerson, id
		}
		return RouteUnknown, ""
	}
	routes := map[string]Route{
		"GET /api/v2/persons": RouteListPersons, "POST /api/v2/persons": RouteAddPerson,
		"GET /api/v2/personFields": RoutePersonFields, "GET /api/v2/organizations": RouteListOrgs,
		"GET /api/v2/organizations/search": RouteSearchOrgs, "POST /api/v2/organizations": RouteAddOrg,
		"GET /v1/recents":  RouteRecents,
		"GET /v1/webhooks": RouteListWebhooks, "POST /v1/webhooks": RouteAddWebhook,
	}
	if rt, found := routes[r.Method+" "+p]; found {
		return rt, ""
	}
	return RouteUnknown, ""
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	route, id := routeOf(r)
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body.Close()
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	a := s.handleLocked(route, id, r, body)
	s.stats.Add(route, a.Status)
	s.mu.Unlock()

	a.Write(w, "application/json")
}

func (s *Server) handleLocked(route Route, id string, r *http.Request, body []byte) answer {
	if !s.authorizedLocked(r) {
		return fail(http.StatusUnauthorized, "You need to be authorized to make this request.")
	}
	a, passed := s.limitLocked(route, r.Method)
	if !passed {
		return a
	}
	if route == RouteUnknown {
		a = fail(http.StatusNotFound, "Unknown method .")
	} else if f, found := s.faults.Pop(route); found {
		if f.AfterApply {
			s.routeLocked(route, id, r, body)
		}
		a = fail(f.Status, http.StatusText(f.Status))
	} else {
		a = s.routeLocked(route, id, r, body)
	}
	s.rateHeadersLocked(&a, route)
	if a.Status == http.StatusTooManyRequests {
		// An injected 429 is the burst window's, spent by others.
		a.SetHeader("x-ratelimit-limit", strconv.Itoa(max(1, s.opts.BurstLimit)))
		a.SetHeader("x-ratelimit-remaining", "0")
		a.SetHeader("x-ratelimit-reset", "1")
	}
	return a
}

// authorizedLocked checks the API token. API v2 takes it in the
// x-api-token header only: its OpenAPI description has no other API key,
// and a v2 request with api_token in the query string is refused (401)
// even beside a good header. API v1 also takes the older api_token query
// parameter.
func (s *Server) authorizedLocked(r *http.Request) bool {
	q := r.URL.Query()
	if strings.HasPrefix(r.URL.Path, "/api/v2/") {
		return !q.Has("api_token") && r.Header.Get("x-api-token") == s.opts.Token
	}
	if r.Header.Get("x-api-token") != "" {
		return r.Header.Get("x-api-token") == s.opts.Token
	}
	return q.Get("api_token") == s.opts.Token
}

func (s *Server) routeLocked(route Route, id string, r *http.Request, body []byte) answer {
	q := r.URL.Query()
	switch route {
	case RouteListPersons:
		return s.listPersonsLocked(q)
	case RouteGetPerson:
		return s.getPersonLocked(id)
	case RouteAddPerson:
		return s.addPersonLocked(body)
	case RouteUpdatePerson:
		return s.updatePersonLocked(id, body)
	case RouteDeletePerson:
		return s.deletePersonLocked(id)
	case RouteMergePersons:
		return s.mergePersonsLocked(id, body)
	case RoutePersonFields:
		return s.personFieldsLocked(q)
	case RouteListOrgs:
		return s.listOrgsLocked(q)
	case RouteSearchOrgs:
		return s.searchOrgsLocked(q)
	case RouteAddOrg:
		return s.addOrgRouteLocked(body)
	case RouteRecents:
		return s.recentsLocked(q)
	case RouteListWebhooks:
		return s.listWebhooksLocked()
	case RouteAddWebhook:
		return s.addWebhookLocked(body)
	case RouteDeleteWebhook:
		return s.deleteWebhookLocked(id)
	}
	if a, found := s.activityRouteLocked(route, id, q, body); found {
		return a
	}
	return fail(http.StatusNotFound, "Unknown method .")
}

// isSearch reports whether a route is one of the Search API's, which has
// its own burst limit.
func isSearch(route Route) bool { return route == RouteSearchOrgs }

// window is a rolling window of requests on real time.
type window []time.Time

// admit drops the requests older than d and adds now unless limit are
// left in the window.
func (w *window) admit(now time.Time, d time.Duration, limit int) bool {
	cut := now.Add(-d)
	i := 0
	for i < len(*w) && !(*w)[i].After(cut) {
		i++
	}
	*w = (*w)[i:]
	if len(*w) >= limit {
		return false
	}
	*w = append(*w, now)
	return true
}

// reset is the whole seconds until the window's oldest request leaves it.
func (w window) reset(d time.Duration) int {
	if len(w) == 0 {
		return 0
	}
	return max(0, int(math.Ceil(time.Until(w[0].Add(d)).Seconds())))
}

// limitLocked applies the daily token budget, the burst limit and the
// Search API's own limit, charging the request when it passes. The
// windows run on real time: they pace real clients, whatever the
// (possibly frozen) clock says. A search counts in both windows.
func (s *Server) limitLocked(route Route, method string) (answer, bool) {
	now := time.Now()
	if isSearch(route) && s.searchLimit() > 0 && !s.searches.admit(now, s.opts.BurstWindow, s.searchLimit()) {
		a := fail(http.StatusTooManyRequests, "Request over limit")
		s.rateHeadersLocked(&a, route)
		return a, false
	}
	if s.opts.BurstLimit > 0 && !s.calls.admit(now, s.opts.BurstWindow, s.opts.BurstLimit) {
		a := fail(http.StatusTooManyRequests, "Request over limit")
		s.rateHeadersLocked(&a, RouteUnknown)
		return a, false
	}
	cost := tokenCost(route)
	if s.opts.DailyTokens > 0 && s.stats.TokensSpent+cost > s.opts.DailyTokens {
		a := fail(http.StatusTooManyRequests, "Daily API token budget exceeded")
		s.rateHeadersLocked(&a, RouteUnknown)
		return a, false
	}
	s.stats.TokensSpent += cost
	if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		s.postPuts++
	}
	return answer{}, true
}

// searchLimit is the Search API's limit per window: 10 on every plan
// unless Options say otherwise.
func (s *Server) searchLimit() int {
	if s.opts.SearchLimit == 0 {
		return DefaultSearchLimit
	}
	return s.opts.SearchLimit
}

// rateHeadersLocked adds the window's headers (the Search API's window
// on a search route, else the burst window when a burst limit is set)
// and x-daily-requests-left.
func (s *Server) rateHeadersLocked(a *answer, route Route) {
	switch {
	case isSearch(route) && s.searchLimit() > 0:
		a.SetHeader("x-ratelimit-limit", strconv.Itoa(s.searchLimit()))
		a.SetHeader("x-ratelimit-remaining", strconv.Itoa(max(0, s.searchLimit()-len(s.searches))))
		a.SetHeader("x-ratelimit-reset", strconv.Itoa(s.searches.reset(s.opts.BurstWindow)))
	case s.opts.BurstLimit > 0:
		a.SetHeader("x-ratelimit-limit", strconv.Itoa(s.opts.BurstLimit))
		a.SetHeader("x-ratelimit-remaining", strconv.Itoa(max(0, s.opts.BurstLimit-len(s.calls))))
		a.SetHeader("x-ratelimit-reset", strconv.Itoa(s.calls.reset(s.opts.BurstWindow)))
	}
	a.SetHeader("x-daily-requests-left", strconv.Itoa(max(0, DailyPostPutLimit-s.postPuts)))
}

// hashKey makes a 40-character custom field key, as Pipedrive's are.
func hashKey(i int, name string) string {
	sum := sha1.Sum([]byte(fmt.Sprintf("%d/%s", i, name)))
	return hex.EncodeToString(sum[:])
}

// decodeStrict decodes a JSON object, refusing unknown keys as v2 does.
func decodeStrict(body []byte, known map[string]bool) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("invalid JSON body: %v", err)
	}
	for k := range m {
		if !known[k] {
			return nil, fmt.Errorf("unknown field %q", k)
		}
	}
	return m, nil
}
