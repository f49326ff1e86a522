package pipedriveemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// personKeys are the body keys POST and PATCH /api/v2/persons take
// (add_time only on POST).
var personKeys = map[string]bool{
	"name": true, "owner_id": true, "org_id": true, "add_time": true, "emails": true, "phones": true,
	"visible_to": true, "label_ids": true, "postal_address": true, "notes": true, "im": true,
	"birthday": true, "job_title": true, "marketing_status": true, "custom_fields": true,
}

var dateOnly = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

func (s *Server) addPersonLocked(body []byte) answer {
	m, err := decodeStrict(body, personKeys)
	if err != nil {
		return badRequest("%v", err)
	}
	if _, has := m["name"]; !has {
		return badRequest("name is required")
	}
	p := &Person{}
	if err := s.applyLocked(p, m); err != nil {
		return badRequest("%v", err)
	}
	id := s.nextID
	s.nextID++
	p.ID = strconv.FormatInt(id, 10)
	p.UpdateTime = s.stampLocked()
	p.AddTime = p.UpdateTime
	s.persons[id] = p
	s.version++
	s.notifyLocked(p, "create")
	return answer{Status: http.StatusOK, Body: map[string]any{"success": true, "data": s.jsonOfLocked(p, nil)}}
}

func (s *Server) updatePersonLocked(id string, body []byte) answer {
	keys := map[string]bool{}
	for k := range personKeys {
		keys[k] = k != "add_time"
	}
	m, err := decodeStrict(body, keys)
	if err != nil {
		return badRequest("%v", err)
	}
	p, found := s.liveLocked(id)
	if !found {
		return fail(http.StatusNotFound, "Person not found")
	}
	c := clonePerson(*p)
	if err := s.applyLocked(&c, m); err != nil {
		return badRequest("%v", err)
	}
	c.UpdateTime, c.MergeWhatID = s.stampLocked(), ""
	*p = c
	s.changedLocked(p)
	return ok(map[string]any{"success": true, "data": s.jsonOfLocked(p, nil)})
}

// applyLocked validates the body's values and sets them on p.
func (s *Server) applyLocked(p *Person, m map[string]json.RawMessage) error {
	for k, raw := range m {
		var err error
		switch k {
		case "name":
			var name string
			if err = strictString(raw, &name); err == nil && name == "" {
				err = fmt.Errorf("must not be empty")
			}
			p.Name = name
		case "owner_id", "visible_to":
			var n int64
			err = strictInt(raw, &n)
			if k == "owner_id" {
				p.OwnerID = n
			}
		case "org_id":
			p.OrgID, err = s.orgIDLocked(raw)
		case "emails":
			p.Emails, err = items(raw, emailLabels)
		case "phones":
			p.Phones, err = items(raw, phoneLabels)
		case "custom_fields":
			err = s.customLocked(p, raw)
		case "label_ids":
			var ids []int64
			err = json.Unmarshal(raw, &ids)
		default: // add_time, notes, job_title... accepted, not kept
			var v any
			err = json.Unmarshal(raw, &v)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
	}
	return nil
}

func (s *Server) orgIDLocked(raw json.RawMessage) (int64, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return 0, nil
	}
	var n int64
	if err := strictInt(raw, &n); err != nil {
		return 0, err
	}
	if _, found := s.orgs[n]; !found {
		return 0, fmt.Errorf("organization %d not found", n)
	}
	return n, nil
}

// strictString refuses anything but a JSON string.
func strictString(raw json.RawMessage, dst *string) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '"' {
		return fmt.Errorf("must be a string")
	}
	return json.Unmarshal(raw, dst)
}

// strictInt refuses anything but a JSON integer: v2 does not coerce
// strings to numbers.
func strictInt(raw json.RawMessage, dst *int64) error {
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("must be an integer")
	}
	return nil
}

// items validates a labelled list: objects of value (required string),
// primary (boolean) and label (one of labels).
func items(raw json.RawMessage, labels map[string]bool) ([]Item, error) {
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("must be an array of objects")
	}
	out := make([]Item, 0, len(list))
	for i, m := range list {
		var it Item
		for k, v := range m {
			var err error
			switch k {
			case "value":
				err = strictString(v, &it.Value)
			case "label":
				if err = strictString(v, &it.Label); err == nil && !labels[it.Label] {
					err = fmt.Errorf("label %q is not one of the allowed labels", it.Label)
				}
			case "primary":
				err = json.Unmarshal(v, &it.Primary)
			default:
				err = fmt.Errorf("unknown field %q", k)
			}
			if err != nil {
				return nil, fmt.Errorf("[%d].%s: %v", i, k, err)
			}
		}
		if it.Value == "" {
			return nil, fmt.Errorf("[%d].value is required", i)
		}
		if it.Label == "" {
			it.Label = "work"
		}
		out = append(out, it)
	}
	return primaryFirst(out), nil
}

// customLocked validates custom field values by their field's type and
// sets them; null clears a value.
func (s *Server) customLocked(p *Person, raw json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("must be an object")
	}
	for k, v := range m {
		f, found := s.fieldLocked(k)
		if !found {
			return fmt.Errorf("unknown custom field %q", k)
		}
		val, err := fieldValue(f, v)
		if err != nil {
			return fmt.Errorf("%s (%s): %v", k, f.Type, err)
		}
		if p.Custom == nil {
			p.Custom = map[string]any{}
		}
		p.Custom[k] = val
	}
	return nil
}

func (s *Server) fieldLocked(key string) (CustomField, bool) {
	for _, f := range s.fields {
		if f.Key == key {
			return f, true
		}
	}
	return CustomField{}, false
}

// fieldValue checks a value against the field's type and returns it as
// stored (and answered).
func fieldValue(f CustomField, raw json.RawMessage) (any, error) {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	switch f.Type {
	case "monetary":
		return monetaryValue(raw)
	case "double":
		var n float64
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' {
			return nil, fmt.Errorf("must be a number")
		}
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, fmt.Errorf("must be a number")
		}
		return n, nil
	case "int", "enum":
		var n int64
		if err := strictInt(raw, &n); err != nil {
			return nil, err
		}
		if f.Type == "enum" && (n < 1 || int(n) > len(f.Options)) {
			return nil, fmt.Errorf("option %d does not exist", n)
		}
		return n, nil
	case "set":
		var ids []int64
		if err := json.Unmarshal(raw, &ids); err != nil || len(ids) == 0 {
			return nil, fmt.Errorf("must be a non-empty array of option ids (null clears)")
		}
		for _, n := range ids {
			if n < 1 || int(n) > len(f.Options) {
				return nil, fmt.Errorf("option %d does not exist", n)
			}
		}
		return ids, nil
	case "date":
		var d string
		if err := strictString(raw, &d); err != nil || !dateOnly.MatchString(d) {
			return nil, fmt.Errorf("must be a date YYYY-MM-DD")
		}
		return d, nil
	}
	var str string
	if err := strictString(raw, &str); err != nil {
		return nil, err
	}
	return str, nil
}

// Money is the value of a monetary custom field as API v2 shows and takes
// it: {"value": 2300, "currency": "EUR"} (API v1 had the amount and a
// "<key>_currency" beside it). Tests may store a Money in Person.Custom.
type Money struct {
	Value    float64 `json:"value"`
	Currency string  `json:"currency"`
}

// monetaryValue checks a monetary field's value: an object of a number
// and a currency code. A bare number (API v1's shape) is refused, as v2
// validates strictly.
func monetaryValue(raw json.RawMessage) (any, error) {
	var m map[string]json.RawMessage
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Errorf(`must be an object {"value": number, "currency": code}`)
	}
	var out Money
	for k, v := range m {
		switch k {
		case "value":
			if t := bytes.TrimSpace(v); len(t) == 0 || t[0] == '"' || json.Unmarshal(v, &out.Value) != nil {
				return nil, fmt.Errorf("value must be a number")
			}
		case "currency":
			if strictString(v, &out.Currency) != nil || strings.TrimSpace(out.Currency) == "" {
				return nil, fmt.Errorf("currency must be a currency code such as EUR")
			}
		default:
			return nil, fmt.Errorf("unknown field %q", k)
		}
	}
	if _, has := m["value"]; !has {
		return nil, fmt.Errorf("value is required")
	}
	if out.Currency == "" {
		return nil, fmt.Errorf("currency is required")
	}
	return out, nil
}

// mergePersonsLocked answers PUT /v1/persons/{id}/merge: merge_with_id
// (required integer) is the person kept; the person of the URL is
// deleted. The answer is the kept person as API v1 shows it, with
// merge_what_id.
func (s *Server) mergePersonsLocked(id string, body []byte) answer {
	m, err := decodeStrict(body, map[string]bool{"merge_with_id": true})
	if err != nil {
		return badRequest("%v", err)
	}
	var with int64
	if raw, has := m["merge_with_id"]; !has || strictInt(raw, &with) != nil || with < 1 {
		return badRequest("merge_with_id is required: the id of the person to merge with")
	}
	if strconv.FormatInt(with, 10) == id {
		return badRequest("a person cannot be merged with itself")
	}
	keep, err := s.mergeLocked(id, strconv.FormatInt(with, 10))
	if err != nil {
		return fail(http.StatusNotFound, "Person not found")
	}
	return ok(map[string]any{"success": true, "data": s.v1PersonLocked(keep)})
}
