package salesforceemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The activity objects, as the Object Reference documents them
// (connector/salesforce/FACTS.md, "Activities"): Task, on which a call or
// a text is logged, and User, whose e-mail names a task's owner.

// taskFields are Task's fields a call log uses: types and lengths from
// the Object Reference's Task page and the Field Reference.
var taskFields = append(append([]fieldDef{}, systemFields...),
	fieldDef{Name: "WhoId", Type: "reference", Length: 18, Createable: true, Updateable: true, Nillable: true, RefersTo: []string{"Contact", "Lead"}},
	rw("WhatId", "reference", 18),
	rw("Subject", "combobox", 255),
	rw("ActivityDate", "date", 0),
	fieldDef{Name: "Status", Type: "picklist", Length: 40, Createable: true, Updateable: true, Defaulted: true, Default: "Not Started",
		Values: []string{"Not Started", "In Progress", "Completed", "Waiting on someone else", "Deferred"}},
	fieldDef{Name: "Priority", Type: "picklist", Length: 40, Createable: true, Updateable: true, Defaulted: true, Default: "Normal",
		Values: []string{"High", "Normal", "Low"}},
	rw("Description", "textarea", 32000),
	// TaskSubtype: Create but not Update, a restricted picklist.
	fieldDef{Name: "TaskSubtype", Type: "picklist", Length: 40, Createable: true, Nillable: true, Restricted: true,
		Values: []string{"Task", "Email", "ListEmail", "Cadence", "Call", "LinkedIn"}},
	fieldDef{Name: "CallType", Type: "picklist", Length: 40, Createable: true, Updateable: true, Nillable: true, Restricted: true,
		Values: []string{"Internal", "Inbound", "Outbound"}},
	rw("CallDurationInSeconds", "int", 0),
	rw("CallObject", "string", 255),
	rw("CallDisposition", "string", 255),
)

// userFields are the User fields an owner lookup reads.
var userFields = []fieldDef{
	{Name: "Id", Type: "id", Length: 18, Defaulted: true},
	{Name: "IsDeleted", Type: "boolean", Defaulted: true},
	{Name: "CreatedDate", Type: "datetime", Defaulted: true},
	{Name: "LastModifiedDate", Type: "datetime", Defaulted: true},
	{Name: "SystemModstamp", Type: "datetime", Defaulted: true},
	rw("Username", "string", 80),
	rw("Email", "email", 128),
	rw("FirstName", "string", 40),
	rw("LastName", "string", 80),
	fieldDef{Name: "Name", Type: "string", Length: 121},
	fieldDef{Name: "IsActive", Type: "boolean", Createable: true, Updateable: true, Defaulted: true},
}

// activityObjects are the objects beside Contact and Lead.
func activityObjects() []*object {
	return []*object{newObject("Task", "00T", taskFields, nil), newObject("User", "005", userFields, nil)}
}

// AddUser adds an org user, as an administrator would, and returns its
// id.
func (s *Server) AddUser(email, lastName string, active bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objectOf("User")
	return s.insertLocked(o, map[string]any{"email": email, "username": email, "lastname": lastName, "isactive": active})
}

// decodeValue reads one field's JSON value as the field's type takes it:
// text for text fields, a whole number for int fields, true or false for
// checkboxes, YYYY-MM-DD for dates; null for any. A value of the wrong
// JSON type is a JSON_PARSER_ERROR of the whole call, as Salesforce
// answers.
func decodeValue(f fieldDef, raw json.RawMessage) (any, *answer) {
	bad := func(what string) (any, *answer) {
		a := errorAnswer(http.StatusBadRequest, "JSON_PARSER_ERROR", fmt.Sprintf("Cannot deserialize the value of %s: %s", f.Name, what))
		return nil, &a
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	switch f.Type {
	case "int":
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&n); err != nil {
			return bad("an int field takes a JSON number")
		}
		if _, err := n.Int64(); err != nil {
			return bad("an int field takes a whole number")
		}
		return n.String(), nil
	case "boolean":
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return bad("a checkbox takes true or false")
		}
		return b, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return bad("a text field takes a JSON string or null")
	}
	if f.Type == "date" {
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return bad("a date is YYYY-MM-DD")
		}
	}
	return v, nil
}

// checkPicklist refuses a value a restricted picklist does not list.
func checkPicklist(f fieldDef, v string) *fieldError {
	if !f.Restricted || v == "" || slices.Contains(f.Values, v) {
		return nil
	}
	return &fieldError{StatusCode: "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST",
		Message: fmt.Sprintf("%s: bad value for restricted picklist field: %s", f.Name, v), Fields: []string{f.Name}}
}

// checkRefsLocked refuses lookups to records that do not exist, are
// deleted, or are of another object than the field refers to.
func (s *Server) checkRefsLocked(o *object, vals map[string]any) []fieldError {
	var errs []fieldError
	for _, k := range sortedKeys(vals) {
		f := o.fields[k]
		v, _ := vals[k].(string)
		if v == "" || (len(f.RefersTo) == 0 && !(o.name == "Task" && k == "ownerid")) {
			continue
		}
		refersTo := f.RefersTo
		if k == "ownerid" {
			refersTo = []string{"User"}
		}
		if !validID(v) {
			errs = append(errs, fieldError{StatusCode: "MALFORMED_ID", Message: fmt.Sprintf("%s: id value of incorrect type: %s", f.Name, v), Fields: []string{f.Name}})
			continue
		}
		var found *object
		var rec *record
		for _, name := range refersTo {
			if t := s.objects[strings.ToLower(name)]; t != nil && t.records[id15(v)] != nil && !t.records[id15(v)].purged {
				found, rec = t, t.records[id15(v)]
			}
		}
		switch {
		case found == nil && s.anyRecordLocked(v):
			errs = append(errs, fieldError{StatusCode: "FIELD_INTEGRITY_EXCEPTION", Message: fmt.Sprintf("%s: id value of incorrect type: %s", f.Name, v), Fields: []string{f.Name}})
		case found == nil:
			errs = append(errs, fieldError{StatusCode: "INVALID_CROSS_REFERENCE_KEY", Message: fmt.Sprintf("invalid cross reference id: %s", v), Fields: []string{f.Name}})
		case rec.deleted:
			errs = append(errs, fieldError{StatusCode: "ENTITY_IS_DELETED", Message: "entity is deleted", Fields: []string{f.Name}})
		case found.name == "User" && rec.values["isactive"] == false:
			errs = append(errs, fieldError{StatusCode: "INACTIVE_OWNER_OR_USER", Message: "operation performed with inactive user", Fields: []string{f.Name}})
		}
	}
	return errs
}

func (s *Server) anyRecordLocked(id string) bool {
	for _, o := range s.objects {
		if r := o.records[id15(id)]; r != nil && !r.purged {
			return true
		}
	}
	return false
}

// renderValue is a stored value as a query answers it: int fields as
// JSON numbers.
func renderValue(f fieldDef, v any) any {
	if s, ok := v.(string); ok && f.Type == "int" {
		return json.Number(s)
	}
	return v
}

// LoseAnswers makes the next n calls of route be applied and their
// answers lost (the connection closes before any byte of it), as when a
// network fails after Salesforce committed a write: the client cannot
// know whether it was applied. Stats counts them with status 0.
func (s *Server) LoseAnswers(route Route, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lose[route] += n
}

// loseAnswer closes the connection without answering.
func loseAnswer(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("salesforceemu: the response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		conn.Close()
	}
}
