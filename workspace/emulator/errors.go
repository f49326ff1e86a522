package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/syncd-io/syncd/workspace"
)

// area is the group of operations an error code belongs to: the first two
// digits of the seven-digit code.
type area string

// The error code table. The spec shows two rows: rotate secret (area 03:
// 0303400 invalid id, 0300401, 0300403, 0300404, 0301500) and call
// recordings (area 09). From them the emulator reads the layout
// <area:2><kind:2><status:3>, where kind is 00 for a client error, 01 for a
// server error and 03 for an invalid path id, and applies it to every
// webhook operation (area 03). The areas of the other operations are not
// shown; the emulator's own choice is below, kept in this one place.
const (
	areaGeneral      area = "00" // routes that match no operation
	areaWebhooks     area = "03" // spec: rotate secret
	areaContacts     area = "04" // emulator's choice
	areaCustomFields area = "05" // emulator's choice
	areaOrganization area = "06" // emulator's choice
)

// Kinds of the code's middle two digits.
const (
	kindClient    = "00"
	kindServer    = "01"
	kindInvalidID = "03"
)

// noun names an area's resource in messages ("Access to this webhook is
// not authorized").
func (a area) noun() string {
	switch a {
	case areaWebhooks:
		return "webhook"
	case areaContacts:
		return "contact"
	case areaCustomFields:
		return "contact custom field"
	case areaOrganization:
		return "organization"
	}
	return "resource"
}

// code returns the seven-digit code of status in area.
func (a area) code(kind string, status int) string {
	if kind == kindClient && status >= 500 {
		kind = kindServer
	}
	return fmt.Sprintf("%s%s%03d", a, kind, status)
}

// Titles by status, as the spec names them.
var titles = map[int]string{
	http.StatusBadRequest:          "Bad Request",
	http.StatusUnauthorized:        "Unauthorized",
	http.StatusForbidden:           "Forbidden",
	http.StatusNotFound:            "Not Found",
	http.StatusTooManyRequests:     "Too Many Requests",
	http.StatusInternalServerError: "Unknown",
}

// titleInvalidID is the title of the 400 for a malformed path id.
const titleInvalidID = "Invalid Id"

// apiError is an error answer under construction.
type apiError struct {
	status int
	body   workspace.ErrorBody
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.status, e.body.Title, e.body.Message)
}

// newError builds the error body of status in area with message msg.
func (e *Emulator) newError(a area, status int, msg string) *apiError {
	return &apiError{status: status, body: workspace.ErrorBody{
		Message: msg,
		Code:    a.code(kindClient, status),
		Status:  status,
		Docs:    e.opts.DocsURL,
		Title:   titles[status],
	}}
}

// validationError is a 400 listing each field error; its message joins
// "path: message" of each, as the spec describes.
func (e *Emulator) validationError(a area, errs []workspace.FieldError) *apiError {
	parts := make([]string, len(errs))
	for i, fe := range errs {
		parts[i] = fe.Path + ": " + fe.Message
	}
	ae := e.newError(a, http.StatusBadRequest, strings.Join(parts, "; "))
	ae.body.Errors = errs
	return ae
}

// invalidIDError is the 400 of a path id that does not match its pattern:
// code <area>03400, title "Invalid Id", a description, and one errors[]
// entry at /<param> with the pattern in its schema.
func (e *Emulator) invalidIDError(a area, param, value, pattern string) *apiError {
	fe := workspace.FieldError{
		Path:    "/" + param,
		Message: patternMessage(pattern),
		Value:   value,
		Schema:  map[string]any{"type": "string", "pattern": pattern},
	}
	ae := e.newError(a, http.StatusBadRequest, fe.Path+": "+fe.Message)
	ae.body.Code = a.code(kindInvalidID, http.StatusBadRequest)
	ae.body.Title = titleInvalidID
	ae.body.Description = fmt.Sprintf("The %s %q is not a valid id: it must contain digits only.", param, value)
	ae.body.Errors = []workspace.FieldError{fe}
	return ae
}

func (e *Emulator) unauthorized(a area) *apiError {
	return e.newError(a, http.StatusUnauthorized, "Access to this "+a.noun()+" is not authorized: a valid API key is required in the Authorization header")
}

func (e *Emulator) forbidden(a area) *apiError {
	return e.newError(a, http.StatusForbidden, "Access to this "+a.noun()+" is forbidden: the API key may only read")
}

func (e *Emulator) notFound(a area, id string) *apiError {
	noun := a.noun()
	return e.newError(a, http.StatusNotFound, fmt.Sprintf("%s%s %s was not found", strings.ToUpper(noun[:1]), noun[1:], id))
}

func (e *Emulator) unknownError(a area) *apiError {
	return e.newError(a, http.StatusInternalServerError, "An unknown error occurred")
}

func (e *Emulator) rateLimited(a area) *apiError {
	msg := "Rate limit exceeded"
	if e.opts.Rate > 0 {
		msg = fmt.Sprintf("Rate limit exceeded: at most %g requests per second per API key", e.opts.Rate)
	}
	return e.newError(a, http.StatusTooManyRequests, msg)
}

// writeError answers err.
func writeError(w http.ResponseWriter, err *apiError) {
	writeJSON(w, err.status, err.body)
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// dataOf wraps a resource as the service does: {"data": v}.
func dataOf(v any) map[string]any { return map[string]any{"data": v} }

// The 400 refusing custom field items, as the published OpenAPI document
// of the service has it for create and update (code 0801400: kind 01 of
// its contacts area; title and description "Invalid Custom Field Item").
const (
	titleInvalidCustomField = "Invalid Custom Field Item"
	kindCustomField         = "01"
)

// contactError is the 400 of a contact create or update: the custom field
// body when every error is a custom field item's, else validationError's.
func (e *Emulator) contactError(errs []workspace.FieldError) *apiError {
	ae := e.validationError(areaContacts, errs)
	for _, fe := range errs {
		if !strings.HasPrefix(fe.Path, "/customFields/") {
			return ae
		}
	}
	ae.body.Code = areaContacts.code(kindCustomField, http.StatusBadRequest)
	ae.body.Title = titleInvalidCustomField
	ae.body.Description = titleInvalidCustomField
	return ae
}
