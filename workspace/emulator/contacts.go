package emulator

import (
	"encoding/json"
	"errors"
	"net/http"
	"sort"

	"github.com/syncd-io/syncd/workspace"
)

// readBody validates the request body against sch and decodes it into
// dst as far as it can. It answers an error at once for a body that is not
// JSON; schema violations (unknown properties included) are returned for
// the caller to add its own rules to, so that one answer lists them all.
func (e *Emulator) readBody(r *http.Request, a area, sch *node, dst any) ([]workspace.FieldError, *apiError) {
	raw, v, err := decodeBody(r.Body)
	if err != nil {
		msg := "Expected a JSON body"
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			msg = "Expected a body of at most 1 MiB"
		}
		return nil, e.validationError(a, []workspace.FieldError{{Path: "", Message: msg, Schema: sch.schemaMap()}})
	}
	var errs []workspace.FieldError
	sch.validate("", v, &errs)
	if v != nil {
		// Type errors are already listed; decode what decodes.
		_ = json.Unmarshal(raw, dst)
	}
	return errs, nil
}

// merge adds the rule violations more to the schema violations errs,
// leaving out those at a path errs already covers, in path order.
func merge(errs, more []workspace.FieldError) []workspace.FieldError {
	covered := map[string]bool{}
	for _, fe := range errs {
		covered[fe.Path] = true
	}
	for _, fe := range more {
		if !covered[fe.Path] {
			errs = append(errs, fe)
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Path < errs[j].Path })
	return errs
}

func (e *Emulator) apiCreateContact(r *http.Request) answer { return e.createContact(r, false) }
func (e *Emulator) apiPatchContact(r *http.Request) answer  { return e.patchContact(r, false) }
func (e *Emulator) apiDeleteContact(r *http.Request) answer { return e.deleteContact(r) }

// createContact serves POST /v1/contacts (and the app's create, where the
// source defaults to null and reserved sources are the app's to use).
func (e *Emulator) createContact(r *http.Request, app bool) answer {
	var in contactCreateIn
	errs, aerr := e.readBody(r, areaContacts, contactCreateSchema, &in)
	if aerr != nil {
		return fail(aerr)
	}
	if errs = merge(errs, e.checkCreate(&in, app)); len(errs) > 0 {
		return fail(e.contactError(errs))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	c := e.buildContact(&in, app, e.now())
	e.state.addContact(c)
	e.emitLocked(workspace.EventContactUpdated, c)
	return ok(http.StatusCreated, dataOf(cloneContact(c)))
}

// getContact serves GET /v1/contacts/{id}.
func (e *Emulator) getContact(r *http.Request) answer {
	id := r.PathValue("id")
	e.mu.Lock()
	defer e.mu.Unlock()
	rec := e.state.contacts[id]
	if rec == nil {
		return fail(e.notFound(areaContacts, id))
	}
	return ok(http.StatusOK, dataOf(cloneContact(rec.c)))
}

// patchContact serves PATCH /v1/contacts/{id}: a partial update that
// always sets updatedAt and fires contact.updated, even when no value
// changes (the worst case for a receiver that must not loop).
func (e *Emulator) patchContact(r *http.Request, app bool) answer {
	var p workspace.ContactPatch
	errs, aerr := e.readBody(r, areaContacts, contactPatchSchema, &p)
	if aerr != nil {
		return fail(aerr)
	}
	id := r.PathValue("id")
	e.mu.Lock()
	defer e.mu.Unlock()
	rec := e.state.contacts[id]
	if rec == nil {
		return fail(e.notFound(areaContacts, id))
	}
	c, more := e.applyPatch(rec.c, &p, app)
	if errs = merge(errs, more); len(errs) > 0 {
		return fail(e.contactError(errs))
	}
	c.UpdatedAt = bumpUpdatedAt(rec.c.UpdatedAt, e.now())
	e.state.replaceContact(rec, c)
	e.emitLocked(workspace.EventContactUpdated, c)
	return ok(http.StatusOK, dataOf(cloneContact(c)))
}

// deleteContact serves DELETE /v1/contacts/{id}: 204 without a body, and
// contact.deleted carrying the contact as it was.
func (e *Emulator) deleteContact(r *http.Request) answer {
	id := r.PathValue("id")
	e.mu.Lock()
	defer e.mu.Unlock()
	rec := e.state.contacts[id]
	if rec == nil {
		return fail(e.notFound(areaContacts, id))
	}
	e.state.deleteContact(rec)
	e.emitLocked(workspace.EventContactDeleted, rec.c)
	return ok(http.StatusNoContent, nil)
}

// customFields serves GET /v1/contact-custom-fields.
func (e *Emulator) customFields(*http.Request) answer {
	defs := append([]workspace.CustomFieldDefinition{}, e.opts.CustomFields...)
	return ok(http.StatusOK, dataOf(defs))
}

// organization serves GET /v1/organization (and /organization).
func (e *Emulator) organization(*http.Request) answer {
	return ok(http.StatusOK, dataOf(workspace.Organization{
		ID:                 e.orgID(),
		Name:               e.opts.OrganizationName,
		SubscriptionStatus: "active",
		CreatedAt:          e.created,
		UpdatedAt:          e.created,
	}))
}
