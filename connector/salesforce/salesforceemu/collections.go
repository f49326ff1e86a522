package salesforceemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// saveResult is one record's result in an sObject Collections answer.
type saveResult struct {
	ID      *string      `json:"id"`
	Success bool         `json:"success"`
	Errors  []fieldError `json:"errors"`
}

type collectionRequest struct {
	AllOrNone bool                         `json:"allOrNone"`
	Records   []map[string]json.RawMessage `json:"records"`
}

// item is one decoded record of a create or update.
type item struct {
	obj    *object
	id     string
	vals   map[string]any
	errors []fieldError
}

var tooMany = errorAnswer(http.StatusBadRequest, "EXCEEDED_ID_LIMIT", "record limit reached. cannot submit more than 200 records into this call")

// decodeCollection reads a create or update body. Whole-call problems
// (bad JSON, too many records, no type, unknown fields) are a 400
// answer; per-record ones go to the item's errors.
func (s *Server) decodeCollection(body []byte, update bool) ([]*item, bool, *answer) {
	var req collectionRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil || req.Records == nil {
		a := errorAnswer(http.StatusBadRequest, "JSON_PARSER_ERROR", "The request body is not a valid sObject Collections request: {allOrNone, records: [...]}")
		return nil, false, &a
	}
	if len(req.Records) > maxCollection {
		return nil, false, &tooMany
	}
	items := make([]*item, 0, len(req.Records))
	for _, raw := range req.Records {
		var attrs struct {
			Type string `json:"type"`
		}
		if a, ok := raw["attributes"]; !ok || json.Unmarshal(a, &attrs) != nil || attrs.Type == "" {
			a := errorAnswer(http.StatusBadRequest, "INVALID_TYPE", "Must send a concrete entity type.")
			return nil, false, &a
		}
		o := s.objects[strings.ToLower(attrs.Type)]
		if o == nil {
			a := errorAnswer(http.StatusBadRequest, "INVALID_TYPE", fmt.Sprintf("sObject type '%s' is not supported.", attrs.Type))
			return nil, false, &a
		}
		it := &item{obj: o, vals: map[string]any{}}
		var readOnly []string
		for _, k := range sortedKeys(raw) {
			if k == "attributes" {
				continue
			}
			lk := strings.ToLower(k)
			f, known := o.fields[lk]
			if !known {
				a := errorAnswer(http.StatusBadRequest, "INVALID_FIELD", fmt.Sprintf("No such column '%s' on sobject of type %s", k, o.name))
				return nil, false, &a
			}
			v, bad := decodeValue(f, raw[k])
			if bad != nil {
				return nil, false, bad
			}
			switch {
			case lk == "id":
				if id, ok := v.(string); ok {
					it.id = id
				}
			case (update && !f.Updateable) || (!update && !f.Createable):
				readOnly = append(readOnly, f.Name)
			default:
				it.vals[lk] = v
			}
		}
		if len(readOnly) > 0 {
			it.errors = append(it.errors, fieldError{StatusCode: "INVALID_FIELD_FOR_INSERT_UPDATE",
				Message: "Unable to create/update fields: " + strings.Join(readOnly, ", ") + ". Please check the security settings of this field and verify that it is read/write for your profile or permission set.",
				Fields:  readOnly})
		}
		items = append(items, it)
	}
	return items, req.AllOrNone, nil
}

func (s *Server) createLocked(body []byte) answer {
	items, allOrNone, bad := s.decodeCollection(body, false)
	if bad != nil {
		return *bad
	}
	for _, it := range items {
		if it.id != "" {
			it.errors = append(it.errors, fieldError{StatusCode: "INVALID_FIELD", Message: "cannot specify Id in an insert call", Fields: []string{"Id"}})
			continue
		}
		if len(it.errors) == 0 {
			it.errors = it.obj.checkValues(it.vals)
		}
		if len(it.errors) == 0 {
			it.errors = s.checkRefsLocked(it.obj, it.vals)
		}
		if len(it.errors) == 0 {
			it.errors = s.checkSavedLocked(it.obj, withDefaults(it.obj, it.vals))
		}
	}
	return s.commitLocked(items, allOrNone, func(it *item) string {
		return s.insertLocked(it.obj, it.vals)
	})
}

func withDefaults(o *object, vals map[string]any) map[string]any {
	out := map[string]any{}
	for k, f := range o.fields {
		if f.Default != "" {
			out[k] = f.Default
		}
	}
	for k, v := range vals {
		out[k] = v
	}
	return out
}

func (s *Server) updateLocked(body []byte) answer {
	items, allOrNone, bad := s.decodeCollection(body, true)
	if bad != nil {
		return *bad
	}
	for _, it := range items {
		if len(it.errors) > 0 {
			continue
		}
		rec, e := s.targetLocked(it.id, "update")
		if e != nil {
			it.errors = []fieldError{*e}
			continue
		}
		if rec.obj != it.obj {
			it.errors = []fieldError{{StatusCode: "INVALID_CROSS_REFERENCE_KEY", Message: "invalid cross reference id"}}
			continue
		}
		if it.errors = it.obj.checkValues(it.vals); len(it.errors) > 0 {
			continue
		}
		if it.errors = s.checkRefsLocked(it.obj, it.vals); len(it.errors) > 0 {
			continue
		}
		saved := map[string]any{}
		for k, v := range rec.rec.values {
			saved[k] = v
		}
		for k, v := range it.vals {
			saved[k] = v
		}
		it.errors = s.checkSavedLocked(it.obj, saved)
	}
	return s.commitLocked(items, allOrNone, func(it *item) string {
		_, r := s.liveLocked(it.id)
		s.applyLocked(r, it.vals)
		return r.id
	})
}

type target struct {
	obj *object
	rec *record
}

// targetLocked finds the live record an update or delete addresses, or
// the error Salesforce answers for it.
func (s *Server) targetLocked(id, what string) (target, *fieldError) {
	switch {
	case id == "":
		return target{}, &fieldError{StatusCode: "MISSING_ARGUMENT", Message: "Id not specified in an " + what + " call", Fields: []string{}}
	case !validID(id):
		return target{}, &fieldError{StatusCode: "MALFORMED_ID", Message: "malformed id " + id, Fields: []string{}}
	}
	for _, o := range s.objects {
		r := o.records[id15(id)]
		if r == nil || r.purged {
			continue
		}
		if r.deleted {
			return target{}, &fieldError{StatusCode: "ENTITY_IS_DELETED", Message: "entity is deleted", Fields: []string{}}
		}
		if n := s.locks[id15(id)]; n > 0 {
			s.locks[id15(id)] = n - 1
			return target{}, &fieldError{StatusCode: "UNABLE_TO_LOCK_ROW", Message: "unable to obtain exclusive access to this record or 1 records: " + r.id, Fields: []string{}}
		}
		return target{obj: o, rec: r}, nil
	}
	return target{}, &fieldError{StatusCode: "INVALID_CROSS_REFERENCE_KEY", Message: "invalid cross reference id", Fields: []string{}}
}

// commitLocked applies the items without errors (none of them when
// allOrNone and one failed) and answers one result per item, in order.
func (s *Server) commitLocked(items []*item, allOrNone bool, apply func(*item) string) answer {
	failed := false
	for _, it := range items {
		failed = failed || len(it.errors) > 0
	}
	out := make([]saveResult, len(items))
	for i, it := range items {
		// SaveResult: id is set only for a record saved; an empty id
		// means it was not.
		switch {
		case len(it.errors) > 0:
			out[i] = saveResult{Errors: it.errors}
		case allOrNone && failed:
			out[i] = saveResult{Errors: []fieldError{{StatusCode: "ALL_OR_NONE_OPERATION_ROLLED_BACK",
				Message: "Record rolled back because not all records were valid and the request was using AllOrNone header", Fields: []string{}}}}
		default:
			v := apply(it)
			out[i] = saveResult{ID: &v, Success: true, Errors: []fieldError{}}
		}
	}
	return answer{Status: http.StatusOK, Body: out}
}

func (s *Server) deleteAPILocked(r *http.Request) answer {
	q := r.URL.Query()
	raw := q.Get("ids")
	if raw == "" {
		return errorAnswer(http.StatusBadRequest, "MISSING_ARGUMENT", "ids must be specified")
	}
	ids := strings.Split(raw, ",")
	if len(ids) > maxCollection {
		return tooMany
	}
	allOrNone := q.Get("allOrNone") == "true"
	items := make([]*item, len(ids))
	targets := make([]target, len(ids))
	for i, id := range ids {
		items[i] = &item{id: id}
		t, e := s.targetLocked(id, "delete")
		if e != nil {
			items[i].errors = []fieldError{*e}
		}
		targets[i] = t
	}
	pos := map[*item]int{}
	for i, it := range items {
		pos[it] = i
	}
	return s.commitLocked(items, allOrNone, func(it *item) string {
		t := targets[pos[it]]
		if !t.rec.deleted {
			s.deleteLocked(t.obj, t.rec)
		}
		return t.rec.id
	})
}
