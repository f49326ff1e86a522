package emulator

import (
	"net/http"

	"github.com/syncd-io/syncd/workspace"
)

// backdoorPrefix starts the routes for tests and demos: no API key, no
// rate limit, no faults, not counted in Stats.
const backdoorPrefix = "/_emulator/"

// backdoorRoutes adds the back door to mux.
func (e *Emulator) backdoorRoutes(mux *http.ServeMux) {
	serve := func(h func(r *http.Request) answer) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
			a := h(r)
			switch {
			case a.err != nil:
				writeError(w, a.err)
			case a.body == nil:
				w.WriteHeader(a.status)
			default:
				writeJSON(w, a.status, a.body)
			}
		}
	}
	mux.Handle("GET /_emulator/contacts", serve(func(*http.Request) answer { return ok(http.StatusOK, dataOf(e.Contacts())) }))
	mux.Handle("GET /_emulator/webhooks", serve(func(*http.Request) answer { return ok(http.StatusOK, dataOf(e.Webhooks())) }))
	mux.Handle("GET /_emulator/stats", serve(func(*http.Request) answer { return ok(http.StatusOK, e.Stats()) }))
	// A person's edits in the product's app: the same rules as the API
	// (but the app's creates have no default source and may use reserved
	// ones), updatedAt changes and webhooks fire.
	mux.Handle("POST /_emulator/app/contacts", serve(func(r *http.Request) answer { return e.createContact(r, true) }))
	mux.Handle("PATCH /_emulator/app/contacts/{id}", serve(func(r *http.Request) answer { return e.patchContact(r, true) }))
	mux.Handle("DELETE /_emulator/app/contacts/{id}", serve(e.deleteContact))
	mux.Handle("POST /_emulator/reset", serve(func(*http.Request) answer {
		e.Reset()
		return ok(http.StatusNoContent, nil)
	}))
	mux.Handle("POST /_emulator/faults", serve(e.setFaults))
	e.activityRoutes(mux, serve)
}

var faultsSchema = object(map[string]*node{"rate": {typ: "number"}}, "rate")

// setFaults serves POST /_emulator/faults {"rate": P}, P in [0,1].
func (e *Emulator) setFaults(r *http.Request) answer {
	var in struct {
		Rate float64 `json:"rate"`
	}
	errs, aerr := e.readBody(r, areaGeneral, faultsSchema, &in)
	if aerr != nil {
		return fail(aerr)
	}
	if len(errs) > 0 {
		return fail(e.validationError(areaGeneral, errs))
	}
	if in.Rate < 0 || in.Rate > 1 {
		return fail(e.validationError(areaGeneral, []workspace.FieldError{{Path: "/rate", Message: "Expected number between 0 and 1",
			Value: in.Rate, Schema: map[string]any{"type": "number", "minimum": 0, "maximum": 1}}}))
	}
	e.SetFaultRate(in.Rate)
	return ok(http.StatusOK, map[string]float64{"rate": e.FaultRate()})
}
