package emulator

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/syncd-io/syncd/workspace"
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// WebhookIDPattern is the pattern of webhook ids in paths.
const WebhookIDPattern = `^[0-9]+$`

// answer is a handler's result: a status and a body (none when nil), or
// an error answer.
type answer struct {
	status int
	body   any
	err    *apiError
}

func ok(status int, body any) answer { return answer{status: status, body: body} }
func fail(err *apiError) answer      { return answer{err: err} }

// op is one API operation.
type op struct {
	route   string // "METHOD /path/{param}": the mux pattern and the stats key
	area    area
	write   bool // refused to the read-only key
	webhook bool // requires the version header; {id} is a webhook id
	handle  func(r *http.Request) answer
}

// routes builds the handler: the API operations behind the middleware,
// and the back door.
func (e *Emulator) routes() http.Handler {
	mux := http.NewServeMux()
	ops := []op{
		{route: workspace.RouteCreateContact, area: areaContacts, write: true, handle: e.apiCreateContact},
		{route: workspace.RouteListContacts, area: areaContacts, handle: e.listContacts},
		{route: workspace.RouteGetContact, area: areaContacts, handle: e.getContact},
		{route: workspace.RouteUpdateContact, area: areaContacts, write: true, handle: e.apiPatchContact},
		{route: workspace.RouteDeleteContact, area: areaContacts, write: true, handle: e.apiDeleteContact},
		{route: workspace.RouteCustomFields, area: areaCustomFields, handle: e.customFields},
		{route: workspace.RouteOrganization, area: areaOrganization, handle: e.organization},
		{route: "GET /organization", area: areaOrganization, handle: e.organization},
		{route: workspace.RouteCreateWebhook, area: areaWebhooks, write: true, webhook: true, handle: e.createWebhook},
		{route: workspace.RouteListWebhooks, area: areaWebhooks, webhook: true, handle: e.listWebhooks},
		{route: workspace.RouteGetWebhook, area: areaWebhooks, webhook: true, handle: e.getWebhook},
		{route: workspace.RouteUpdateWebhook, area: areaWebhooks, write: true, webhook: true, handle: e.patchWebhook},
		{route: workspace.RouteDeleteWebhook, area: areaWebhooks, write: true, webhook: true, handle: e.deleteWebhook},
		{route: workspace.RouteRotateWebhookSecret, area: areaWebhooks, write: true, webhook: true, handle: e.rotateWebhook},
		{route: workspace.RouteWebhookDeliveries, area: areaWebhooks, webhook: true, handle: e.webhookDeliveries},
		{route: workspace.RouteRetryDelivery, area: areaWebhooks, write: true, webhook: true, handle: e.retryDelivery},
		{route: workspace.RouteSendTestEvent, area: areaWebhooks, write: true, webhook: true, handle: e.testEvent},
	}
	ops = append(ops, e.activityOps()...)
	for _, o := range ops {
		switch {
		case o.area == areaOrganization && e.opts.NoOrganization:
			continue // answered by unmatched: 404
		case o.webhook:
			// The spec's form and the published document's (/v1), as
			// Options.WebhookRoutes says.
			for _, form := range []string{workspace.WebhookRoutesSpec, workspace.WebhookRoutesV1} {
				if e.opts.WebhookRoutes == RoutesBoth || e.opts.WebhookRoutes == form {
					v := o
					v.route = workspace.WebhookRoute(o.route, form)
					mux.Handle(v.route, e.serveAPI(v))
				}
			}
			continue
		}
		mux.Handle(o.route, e.serveAPI(o))
	}
	e.backdoorRoutes(mux)
	mux.HandleFunc("/", e.unmatched)
	return mux
}

// serveAPI runs the checks every API request goes through, in order:
// counting, latency, authentication (401), the key's rate limit (429),
// injected faults, the read-only key (403), the version header (400), a
// webhook id's pattern (400), and the operation.
func (e *Emulator) serveAPI(o op) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		version, hasVersion := r.Header.Get(e.opts.VersionHeader), len(r.Header.Values(e.opts.VersionHeader)) > 0
		e.count(o.route, hasVersion)
		if err := sleep(r.Context(), time.Duration(e.latency.Load())); err != nil {
			return
		}
		key := r.Header.Get("Authorization")
		if key == "" || (key != e.opts.APIKey && key != e.opts.ReadOnlyKey) {
			writeError(w, e.unauthorized(o.area))
			return
		}
		if !e.limiter(key).Allow() {
			e.countThrottled()
			if e.opts.RetryAfter {
				w.Header().Set("Retry-After", strconv.Itoa(e.retryAfterSeconds(key)))
			}
			writeError(w, e.rateLimited(o.area))
			return
		}
		lost := false
		f := e.drawFault(o.route)
		if f != faultNone && f != faultLost {
			w.Header().Set(FaultHeader, f.String())
		}
		switch f {
		case faultServerError:
			writeError(w, e.unknownError(o.area))
			return
		case faultTooMany:
			writeError(w, e.rateLimited(o.area))
			return
		case faultLatency:
			if err := sleep(r.Context(), e.opts.FaultLatency); err != nil {
				return
			}
		case faultLost:
			lost = true
		}
		a := e.precheck(o, r, key, version, hasVersion)
		if a.err == nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
			a = o.handle(r)
		}
		if lost {
			dropConnection(w)
			return
		}
		if a.err != nil {
			writeError(w, a.err)
			return
		}
		if a.body == nil {
			w.WriteHeader(a.status)
			return
		}
		writeJSON(w, a.status, a.body)
	})
}

// precheck refuses the read-only key's writes, a missing or wrong version
// header, and a malformed webhook id.
func (e *Emulator) precheck(o op, r *http.Request, key, version string, hasVersion bool) answer {
	if o.write && key != e.opts.APIKey {
		return fail(e.forbidden(o.area))
	}
	if (o.webhook && !hasVersion) || (hasVersion && version != e.opts.Version) {
		fe := workspace.FieldError{Path: "/headers/" + strings.ToLower(e.opts.VersionHeader), Message: "Expected required property",
			Schema: map[string]any{"type": "string", "enum": []string{e.opts.Version}}}
		if hasVersion {
			fe.Message, fe.Value = "Expected union value", version
		}
		return fail(e.validationError(o.area, []workspace.FieldError{fe}))
	}
	if o.webhook && strings.Contains(o.route, "{id}") {
		if id := r.PathValue("id"); !digits(id) {
			return fail(e.invalidIDError(o.area, "webhookId", id, WebhookIDPattern))
		}
	}
	return answer{}
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// unmatched answers a path no operation serves: 404, counted under
// "METHOD (unmatched)" unless it is under the back door.
func (e *Emulator) unmatched(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, backdoorPrefix) {
		e.count(r.Method+" (unmatched)", len(r.Header.Values(e.opts.VersionHeader)) > 0)
	}
	writeError(w, e.newError(areaGeneral, http.StatusNotFound, "No operation "+r.Method+" "+r.URL.Path))
}

// dropConnection closes the client's connection without an answer: the
// "lost answer" fault.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func (e *Emulator) count(route string, hasVersion bool) {
	e.statsMu.Lock()
	e.stats.Requests[route]++
	if !hasVersion {
		e.stats.MissingVersion++
	}
	e.statsMu.Unlock()
}

func (e *Emulator) countThrottled() {
	e.statsMu.Lock()
	e.stats.Throttled++
	e.statsMu.Unlock()
}

// limiter returns the token bucket of key.
func (e *Emulator) limiter(key string) *rate.Limiter {
	e.limMu.Lock()
	defer e.limMu.Unlock()
	l := e.limiters[key]
	if l == nil {
		lim := rate.Limit(e.opts.Rate)
		if e.opts.Rate < 0 {
			lim = rate.Inf
		}
		l = rate.NewLimiter(lim, e.opts.Burst)
		e.limiters[key] = l
	}
	return l
}

// retryAfterSeconds is the wait, in whole seconds (at least 1), until key
// has a token again.
func (e *Emulator) retryAfterSeconds(key string) int {
	res := e.limiter(key).Reserve()
	d := res.Delay()
	res.Cancel()
	return max(1, int(math.Ceil(d.Seconds())))
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
