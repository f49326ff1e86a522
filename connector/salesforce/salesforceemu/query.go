package salesforceemu

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

const dateTimeLayout = "2006-01-02T15:04:05.000-0700"

// locator is an open query cursor.
type locator struct {
	obj     *object
	fields  []string
	ids     []string // 15-character ids, in result order
	version string
	created time.Time
	used    time.Time
}

type queryAnswer struct {
	TotalSize      int              `json:"totalSize"`
	Done           bool             `json:"done"`
	NextRecordsURL string           `json:"nextRecordsUrl,omitempty"`
	Records        []map[string]any `json:"records"`
}

func versionOf(r *http.Request) string {
	m := pathRE.FindStringSubmatch(r.URL.Path)
	return "v" + m[1] + "." + m[2]
}

// batchSize reads Sforce-Query-Options: batchSize=n (200 to 2,000).
func batchSize(r *http.Request) int {
	n := maxBatch
	for _, opt := range strings.Split(r.Header.Get("Sforce-Query-Options"), ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(opt), "batchSize="); ok {
			if b, err := strconv.Atoi(v); err == nil {
				n = min(max(b, minBatch), maxBatch)
			}
		}
	}
	return n
}

func (s *Server) queryLocked(r *http.Request, all bool) answer {
	q := r.URL.Query().Get("q")
	if q == "" {
		return errorAnswer(http.StatusBadRequest, "MALFORMED_QUERY", "A query string has to be specified")
	}
	stmt, err := parseSOQL(q)
	if err != nil {
		return soqlAnswer(err)
	}
	o := s.objects[strings.ToLower(stmt.object)]
	if o == nil {
		return errorAnswer(http.StatusBadRequest, "INVALID_TYPE", fmt.Sprintf("sObject type '%s' is not supported.", stmt.object))
	}
	if err := o.check(stmt); err != nil {
		return soqlAnswer(err)
	}
	var hits []*record
	for _, rec := range o.sorted() {
		if rec.deleted && !all {
			continue
		}
		if stmt.where == nil || o.eval(stmt.where, rec) {
			hits = append(hits, rec)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return o.less(stmt.orderBy, hits[i], hits[j]) })
	if stmt.limit >= 0 && len(hits) > stmt.limit {
		hits = hits[:stmt.limit]
	}
	if stmt.count {
		// The size says the count; records is null.
		return answer{Status: http.StatusOK, Body: queryAnswer{TotalSize: len(hits), Done: true}}
	}
	loc := &locator{obj: o, fields: stmt.fields, version: versionOf(r), created: s.nowLocked(), used: s.nowLocked()}
	for _, h := range hits {
		loc.ids = append(loc.ids, id15(h.id))
	}
	return s.pageLocked("", loc, 0, batchSize(r))
}

func soqlAnswer(err error) answer {
	if e, ok := err.(*soqlError); ok {
		return errorAnswer(http.StatusBadRequest, e.code, e.msg)
	}
	return errorAnswer(http.StatusBadRequest, "MALFORMED_QUERY", err.Error())
}

// pageLocked answers the records of loc from offset on, and keeps the
// locator when more remain.
func (s *Server) pageLocked(key string, loc *locator, from, size int) answer {
	end := min(from+size, len(loc.ids))
	ans := queryAnswer{TotalSize: len(loc.ids), Done: end >= len(loc.ids), Records: []map[string]any{}}
	for _, id := range loc.ids[from:end] {
		rec := loc.obj.records[id]
		ans.Records = append(ans.Records, loc.obj.render(rec, loc.fields, loc.version))
		s.reads[rec.id]++
		s.stats.Records++
	}
	if !ans.Done {
		if key == "" {
			s.locSeq++
			key = fmt.Sprintf("01g5g%010dAAA", s.locSeq)
			s.locators[key] = loc
		}
		loc.used = s.nowLocked()
		ans.NextRecordsURL = fmt.Sprintf("/services/data/%s/query/%s-%d", loc.version, key, end)
	} else if key != "" {
		delete(s.locators, key)
	}
	return answer{Status: http.StatusOK, Body: ans}
}

// expired reports whether the locator is gone at now: 2 days after the
// query from API 56.0, 15 minutes unused before.
func (l *locator) expired(now time.Time) bool {
	var major int
	if _, err := fmt.Sscanf(l.version, "v%d.", &major); err == nil && major >= 56 {
		return now.Sub(l.created) > locatorTTL56
	}
	return now.Sub(l.used) > locatorTTL
}

func (s *Server) queryMoreLocked(ref string, size int) answer {
	key, off, ok := strings.Cut(ref, "-")
	loc := s.locators[key]
	from, err := strconv.Atoi(off)
	if !ok || loc == nil || err != nil || from < 0 || from > len(loc.ids) || loc.expired(s.nowLocked()) {
		delete(s.locators, key)
		return errorAnswer(http.StatusBadRequest, "INVALID_QUERY_LOCATOR", "invalid query locator")
	}
	return s.pageLocked(key, loc, from, size)
}

// check refuses unknown fields and comparisons of the wrong type.
func (o *object) check(q *soql) error {
	unknown := func(f string) error {
		return &soqlError{"INVALID_FIELD", fmt.Sprintf("No such column '%s' on entity '%s'. If you are attempting to use a custom field, be sure to append the '__c' after the custom field name.", f, o.name)}
	}
	for _, f := range q.fields {
		if _, ok := o.fields[f]; !ok {
			return unknown(f)
		}
	}
	for _, k := range q.orderBy {
		if _, ok := o.fields[k.field]; !ok {
			return unknown(k.field)
		}
	}
	var walk func(n node) error
	walk = func(n node) error {
		switch n := n.(type) {
		case *logic:
			for _, a := range n.args {
				if err := walk(a); err != nil {
					return err
				}
			}
		case not:
			return walk(n.arg)
		case cmp:
			f, ok := o.fields[n.field]
			if !ok {
				return unknown(n.field)
			}
			for _, v := range n.vals {
				if err := checkLiteral(f, n.op, v); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if q.where != nil {
		return walk(q.where)
	}
	return nil
}

func checkLiteral(f fieldDef, op string, v literal) error {
	if v.kind == "null" {
		if op != "=" && op != "!=" && op != "in" && op != "notin" {
			return &soqlError{"INVALID_QUERY_FILTER_OPERATOR", fmt.Sprintf("invalid operator on null for field %s", f.Name)}
		}
		return nil
	}
	want := "string"
	switch f.Type {
	case "datetime":
		want = "datetime"
	case "boolean":
		want = "bool"
	}
	if v.kind != want {
		return &soqlError{"INVALID_FIELD", fmt.Sprintf("value of filter criterion for field '%s' must be of type %s and should not be enclosed in quotes", f.Name, map[string]string{"datetime": "dateTime", "bool": "boolean", "string": "string"}[want])}
	}
	if (f.Type == "id" || f.Type == "reference") && !validID(v.s) {
		return &soqlError{"INVALID_QUERY_FILTER_OPERATOR", fmt.Sprintf("invalid ID field: %s", v.s)}
	}
	return nil
}

func (o *object) eval(n node, r *record) bool {
	switch n := n.(type) {
	case *logic:
		for _, a := range n.args {
			v := o.eval(a, r)
			if n.op == "and" && !v {
				return false
			}
			if n.op == "or" && v {
				return true
			}
		}
		return n.op == "and"
	case not:
		return !o.eval(n.arg, r)
	case cmp:
		f := o.fields[n.field]
		val := r.value(n.field)
		switch n.op {
		case "in", "notin":
			in := false
			for _, v := range n.vals {
				if compare(f, val, v) == 0 {
					in = true
				}
			}
			return in == (n.op == "in")
		}
		if val == nil || n.vals[0].kind == "null" {
			eq := val == nil && n.vals[0].kind == "null"
			return (n.op == "=" && eq) || (n.op == "!=" && !eq)
		}
		c := compare(f, val, n.vals[0])
		switch n.op {
		case "=":
			return c == 0
		case "!=":
			return c != 0
		case "<":
			return c < 0
		case "<=":
			return c <= 0
		case ">":
			return c > 0
		case ">=":
			return c >= 0
		}
	}
	return false
}

// compare orders a value against a literal: ids by their 15-character
// form, text case-insensitively, times and booleans by value.
func compare(f fieldDef, val any, lit literal) int {
	if val == nil || lit.kind == "null" {
		switch {
		case val == nil && lit.kind == "null":
			return 0
		case val == nil:
			return -1
		}
		return 1
	}
	switch v := val.(type) {
	case time.Time:
		return v.Compare(lit.t)
	case bool:
		switch {
		case v == lit.b:
			return 0
		case !v:
			return -1
		}
		return 1
	case string:
		if f.Type == "id" || f.Type == "reference" {
			return strings.Compare(id15(v), id15(lit.s))
		}
		return strings.Compare(strings.ToLower(v), strings.ToLower(lit.s))
	}
	return 0
}

func (o *object) less(keys []orderKey, a, b *record) bool {
	for _, k := range keys {
		f := o.fields[k.field]
		av, bv := a.value(k.field), b.value(k.field)
		var c int
		switch {
		case av == nil && bv == nil:
			c = 0
		case av == nil || bv == nil:
			if (av == nil) == k.nullsFirst {
				return true
			}
			return false
		default:
			c = compare(f, av, toLiteral(bv))
			if k.desc {
				c = -c
			}
		}
		if c != 0 {
			return c < 0
		}
	}
	return false
}

func toLiteral(v any) literal {
	switch v := v.(type) {
	case time.Time:
		return literal{kind: "datetime", t: v}
	case bool:
		return literal{kind: "bool", b: v}
	case string:
		return literal{kind: "string", s: v}
	}
	return literal{kind: "null"}
}

// render is a record as the query answers it.
func (o *object) render(r *record, fields []string, version string) map[string]any {
	out := map[string]any{"attributes": map[string]string{"type": o.name, "url": fmt.Sprintf("/services/data/%s/sobjects/%s/%s", version, o.name, r.id)}}
	for _, f := range fields {
		v := r.value(f)
		if t, ok := v.(time.Time); ok {
			v = t.Format(dateTimeLayout)
		}
		out[o.fields[f].Name] = renderValue(o.fields[f], v)
	}
	return out
}
