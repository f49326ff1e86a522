package hubspotemu

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/internal/emukit"
)

// errorBody is HubSpot's error answer. Every field is optional for
// clients; the server fills the ones HubSpot documents for each case.
type errorBody struct {
	Status        string              `json:"status"`
	Message       string              `json:"message"`
	CorrelationID string              `json:"correlationId,omitempty"`
	Category      string              `json:"category,omitempty"`
	SubCategory   string              `json:"subCategory,omitempty"`
	ErrorType     string              `json:"errorType,omitempty"`
	PolicyName    string              `json:"policyName,omitempty"`
	Context       map[string][]string `json:"context,omitempty"`
	Errors        []errorDetail       `json:"errors,omitempty"`
}

type errorDetail struct {
	Message     string              `json:"message"`
	Code        string              `json:"code,omitempty"`
	In          string              `json:"in,omitempty"`
	SubCategory string              `json:"subCategory,omitempty"`
	Context     map[string][]string `json:"context,omitempty"`
}

// answer is a response computed under the server lock and written after it.
type answer = emukit.Answer

func jsonAnswer(status int, body any) answer { return answer{Status: status, Body: body} }

func (s *Server) errorLocked(status int, category, message string) answer {
	return jsonAnswer(status, errorBody{
		Status: "error", Message: message, Category: category,
		CorrelationID: s.correlationIDLocked(),
	})
}

func (s *Server) validationLocked(message string) answer {
	return s.errorLocked(http.StatusBadRequest, "VALIDATION_ERROR", message)
}

func routeOf(r *http.Request) Route {
	switch p := strings.TrimSuffix(r.URL.Path, "/"); {
	case r.Method == http.MethodPost && p == "/crm/v3/objects/contacts/search":
		return RouteSearch
	case r.Method == http.MethodGet && p == "/crm/v3/objects/contacts":
		if r.URL.Query().Get("archived") == "true" {
			return RouteListArchived
		}
		return RouteList
	case r.Method == http.MethodPost && p == "/crm/v3/objects/contacts/batch/create":
		return RouteBatchCreate
	case r.Method == http.MethodPost && p == "/crm/v3/objects/contacts/batch/update":
		return RouteBatchUpdate
	case r.Method == http.MethodPost && p == "/crm/v3/objects/contacts/batch/read":
		return RouteBatchRead
	case r.Method == http.MethodPost && p == "/crm/v3/objects/contacts/batch/archive":
		return RouteBatchArchive
	case r.Method == http.MethodGet && p == "/crm/v3/properties/contacts":
		return RouteProperties
	case r.Method == http.MethodPost && p == "/crm/v3/objects/contacts/merge":
		return RouteMerge
	case r.Method == http.MethodGet && strings.HasPrefix(p, listPath+"/") && !strings.Contains(p[len(listPath)+1:], "/"):
		return RouteGet
	}
	route, _, _ := engagementRoute(r.Method, strings.TrimSuffix(r.URL.Path, "/"))
	return route
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	route := routeOf(r)
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	a := s.handleLocked(route, r, body)
	s.stats.Add(route, a.Status)
	s.mu.Unlock()

	a.Write(w, "application/json;charset=utf-8")
}

func (s *Server) handleLocked(route Route, r *http.Request, body []byte) answer {
	if a, ok := s.authLocked(r); !ok {
		return a
	}
	if route == RouteUnknown {
		return s.errorLocked(http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
	}
	if a, ok := s.limitLocked(route); !ok {
		return a
	}
	var fault *Fault
	if f, ok := s.faults.Pop(route); ok {
		if f.Status != 0 {
			fault = &f
		}
		if fault != nil && !f.AfterApply {
			return s.faultLocked(f)
		}
	}
	a := s.routeLocked(route, r, body)
	if fault != nil {
		return s.faultLocked(*fault)
	}
	s.rateHeadersLocked(route, &a)
	return a
}

func (s *Server) routeLocked(route Route, r *http.Request, body []byte) answer {
	switch route {
	case RouteSearch:
		return s.searchLocked(body)
	case RouteList, RouteListArchived:
		return s.listLocked(r, route == RouteListArchived)
	case RouteBatchCreate:
		return s.batchCreateLocked(body)
	case RouteBatchUpdate:
		return s.batchUpdateLocked(body)
	case RouteBatchRead:
		return s.batchReadLocked(r, body)
	case RouteBatchArchive:
		return s.batchArchiveLocked(body)
	case RouteProperties:
		return s.propertiesLocked()
	case RouteMerge:
		return s.mergeEndpointLocked(body)
	case RouteGet:
		return s.getLocked(r)
	case RouteEngagementCreate, RouteEngagementUpdate, RouteEngagementGet, RouteEngagementSearch,
		RoutePropertyGet, RoutePropertyCreate, RouteGroupCreate, RouteOwners:
		return s.engagementLocked(route, r, body)
	}
	return s.errorLocked(http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
}

func (s *Server) authLocked(r *http.Request) (answer, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return s.errorLocked(http.StatusUnauthorized, "INVALID_AUTHENTICATION",
			"Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview"), false
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || tok != s.opts.Token {
		return s.errorLocked(http.StatusUnauthorized, "INVALID_AUTHENTICATION",
			"Authentication credentials are invalid."), false
	}
	return answer{}, true
}

// limitLocked applies the daily, ten-secondly and search limits, counting
// the request when it passes. Windows run on real time: they pace real
// clients, whatever the server's (possibly frozen) clock says.
func (s *Server) limitLocked(route Route) (answer, bool) {
	now := time.Now()
	if s.opts.DailyLimit > 0 && s.daily >= s.opts.DailyLimit {
		return s.rateLimitedLocked("DAILY", "You have reached your daily limit."), false
	}
	if s.opts.RateLimit > 0 {
		s.calls = trimBefore(s.calls, now.Add(-s.opts.RateWindow))
		if len(s.calls) >= s.opts.RateLimit {
			return s.rateLimitedLocked("TEN_SECONDLY_ROLLING", "You have reached your ten_secondly_rolling limit."), false
		}
	}
	if route == RouteSearch && s.opts.SearchPerSecond > 0 {
		s.searches = trimBefore(s.searches, now.Add(-searchRateWindow))
		if len(s.searches) >= s.opts.SearchPerSecond {
			return s.rateLimitedLocked("SECONDLY", "You have reached your secondly limit."), false
		}
		s.searches = append(s.searches, now)
	}
	if s.opts.RateLimit > 0 {
		s.calls = append(s.calls, now)
	}
	s.daily++
	return answer{}, true
}

func trimBefore(ts []time.Time, t time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(t) {
		i++
	}
	return ts[i:]
}

func (s *Server) rateLimitedLocked(policy, message string) answer {
	a := jsonAnswer(http.StatusTooManyRequests, errorBody{
		Status: "error", Message: message, ErrorType: "RATE_LIMIT",
		PolicyName: policy, CorrelationID: s.correlationIDLocked(),
	})
	if policy == "TEN_SECONDLY_ROLLING" {
		a.SetHeader("X-HubSpot-RateLimit-Interval-Milliseconds", strconv.FormatInt(s.opts.RateWindow.Milliseconds(), 10))
		a.SetHeader("X-HubSpot-RateLimit-Max", strconv.Itoa(s.opts.RateLimit))
		a.SetHeader("X-HubSpot-RateLimit-Remaining", "0")
	}
	return a
}

// rateHeadersLocked adds HubSpot's rate limit headers: the ten-secondly
// ones on every route but search, the daily ones everywhere.
func (s *Server) rateHeadersLocked(route Route, a *answer) {
	if route != RouteSearch && s.opts.RateLimit > 0 {
		a.SetHeader("X-HubSpot-RateLimit-Interval-Milliseconds", strconv.FormatInt(s.opts.RateWindow.Milliseconds(), 10))
		a.SetHeader("X-HubSpot-RateLimit-Max", strconv.Itoa(s.opts.RateLimit))
		a.SetHeader("X-HubSpot-RateLimit-Remaining", strconv.Itoa(max(0, s.opts.RateLimit-len(s.calls))))
	}
	if s.opts.DailyLimit > 0 {
		a.SetHeader("X-HubSpot-RateLimit-Daily", strconv.Itoa(s.opts.DailyLimit))
		a.SetHeader("X-HubSpot-RateLimit-Daily-Remaining", strconv.Itoa(max(0, s.opts.DailyLimit-s.daily)))
	}
}

func (s *Server) faultLocked(f Fault) answer {
	var a answer
	switch f.Status {
	case http.StatusTooManyRequests:
		policy := f.PolicyName
		if policy == "" {
			policy = "TEN_SECONDLY_ROLLING"
		}
		a = s.rateLimitedLocked(policy, fmt.Sprintf("You have reached your %s limit.", strings.ToLower(policy)))
	case http.StatusLocked:
		a = s.errorLocked(http.StatusLocked, "LOCKED", "The resource is locked; retry after 2 seconds.")
	default:
		a = s.errorLocked(f.Status, "INTERNAL_ERROR", http.StatusText(f.Status))
	}
	if f.RetryAfter != "" {
		a.SetHeader("Retry-After", f.RetryAfter)
	}
	return a
}
