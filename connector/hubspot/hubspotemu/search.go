package hubspotemu

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

type searchRequest struct {
	FilterGroups []filterGroup     `json:"filterGroups"`
	Sorts        []json.RawMessage `json:"sorts"`
	Properties   []string          `json:"properties"`
	Limit        *int              `json:"limit"`
	After        string            `json:"after"`
	Query        string            `json:"query"`
}

type filterGroup struct {
	Filters []filter `json:"filters"`
}

type filter struct {
	PropertyName string   `json:"propertyName"`
	Operator     string   `json:"operator"`
	Value        anyValue `json:"value"`
	HighValue    anyValue `json:"highValue"`
	Values       []string `json:"values"`
}

// anyValue takes a filter value sent as a JSON string or number.
type anyValue string

func (v *anyValue) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = anyValue(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*v = anyValue(n.String())
	return nil
}

type sortRule struct {
	PropertyName string `json:"propertyName"`
	Direction    string `json:"direction"`
}

// object is a contact as the API answers it.
type object struct {
	ID         string             `json:"id"`
	Properties map[string]*string `json:"properties"`
	CreatedAt  string             `json:"createdAt"`
	UpdatedAt  string             `json:"updatedAt"`
	Archived   bool               `json:"archived"`
	ArchivedAt string             `json:"archivedAt,omitempty"`
}

type paging struct {
	Next *struct {
		After string `json:"after"`
		Link  string `json:"link,omitempty"`
	} `json:"next,omitempty"`
}

func newPaging(after string) *paging {
	p := &paging{}
	p.Next = &struct {
		After string `json:"after"`
		Link  string `json:"link,omitempty"`
	}{After: after}
	return p
}

type searchAnswer struct {
	Total   int      `json:"total"`
	Results []object `json:"results"`
	Paging  *paging  `json:"paging,omitempty"`
}

// defaultProperties are returned when a request names none.
var defaultProperties = []string{"createdate", "email", "firstname", "hs_object_id", "lastmodifieddate", "lastname"}

// dateProperties compare as instants; filter values are epoch milliseconds
// (ISO 8601 strings are accepted too).
var dateProperties = map[string]bool{"createdate": true, "lastmodifieddate": true}

func (s *Server) searchLocked(body []byte) answer {
	if len(body) > maxSearchBodyChars {
		return s.validationLocked(fmt.Sprintf("The request body is %d characters long, over the limit of %d.", len(body), maxSearchBodyChars))
	}
	var req searchRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return s.validationLocked("Invalid input JSON: " + err.Error())
	}
	limit := 10
	if req.Limit != nil {
		limit = *req.Limit
	}
	if limit < 0 || limit > maxSearchLimit {
		return s.validationLocked(fmt.Sprintf("limit must be between 0 and %d, got %d", maxSearchLimit, limit))
	}
	offset := 0
	if req.After != "" {
		n, err := strconv.Atoi(req.After)
		if err != nil || n < 0 {
			return s.validationLocked(fmt.Sprintf("Invalid after value %q", req.After))
		}
		offset = n
	}
	if offset >= maxSearchResults {
		return s.validationLocked(fmt.Sprintf("Searches are limited to %d results; after %d is past the end.", maxSearchResults, offset))
	}
	if len(req.FilterGroups) > maxFilterGroups {
		return s.validationLocked(fmt.Sprintf("Too many filter groups (%d). The maximum is %d.", len(req.FilterGroups), maxFilterGroups))
	}
	total := 0
	for _, g := range req.FilterGroups {
		if len(g.Filters) > maxFiltersPerGroup {
			return s.validationLocked(fmt.Sprintf("Too many filters in a group (%d). The maximum is %d.", len(g.Filters), maxFiltersPerGroup))
		}
		total += len(g.Filters)
		for _, f := range g.Filters {
			if !knownOperators[f.Operator] {
				return s.validationLocked(fmt.Sprintf("Unknown filter operator %q on %s", f.Operator, f.PropertyName))
			}
		}
	}
	if total > maxFiltersTotal {
		return s.validationLocked(fmt.Sprintf("Too many filters (%d). The maximum is %d.", total, maxFiltersTotal))
	}
	if len(req.Sorts) > 1 {
		return s.validationLocked("Only one sort rule is supported.")
	}
	var rule *sortRule
	if len(req.Sorts) == 1 {
		r, err := parseSort(req.Sorts[0])
		if err != nil {
			return s.validationLocked(err.Error())
		}
		rule = &r
	}

	now := s.nowLocked()
	m := compile(req.FilterGroups)
	lo := m.minID()
	var hits []version
	for _, c := range s.order[sort.Search(len(s.order), func(i int) bool { return s.order[i].id >= lo }):] {
		v, ok := c.indexed(now)
		if !ok || !m.match(c.id, v) || !matchQuery(req.Query, v.props) {
			continue
		}
		hits = append(hits, v)
	}
	desc := rule != nil && strings.EqualFold(rule.Direction, "DESCENDING")
	switch {
	case rule != nil && rule.PropertyName == "hs_object_id":
		// Already ascending by id.
		if desc {
			for i, j := 0, len(hits)-1; i < j; i, j = i+1, j-1 {
				hits[i], hits[j] = hits[j], hits[i]
			}
		}
	case rule != nil:
		sort.SliceStable(hits, func(i, j int) bool {
			c := compareProps(rule.PropertyName, hits[i].props[rule.PropertyName], hits[j].props[rule.PropertyName])
			if desc {
				return c > 0
			}
			return c < 0
		})
	}
	ans := searchAnswer{Total: len(hits), Results: []object{}}
	for i := offset; i < len(hits) && i < offset+limit; i++ {
		ans.Results = append(ans.Results, render(hits[i].props, hits[i].createdAt, hits[i].updatedAt, req.Properties))
	}
	// Like HubSpot, paging.next is offered even when following it would
	// cross the 10,000-result cap; the request that does answers 400.
	if offset+limit < len(hits) && limit > 0 {
		ans.Paging = newPaging(strconv.Itoa(offset + limit))
	}
	return jsonAnswer(http.StatusOK, ans)
}

func parseSort(raw json.RawMessage) (sortRule, error) {
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		if n, ok := strings.CutPrefix(name, "-"); ok {
			return sortRule{PropertyName: n, Direction: "DESCENDING"}, nil
		}
		return sortRule{PropertyName: name, Direction: "ASCENDING"}, nil
	}
	var r sortRule
	if err := json.Unmarshal(raw, &r); err != nil || r.PropertyName == "" {
		return sortRule{}, fmt.Errorf("invalid sort %s", raw)
	}
	switch strings.ToUpper(r.Direction) {
	case "", "ASCENDING", "DESCENDING":
	default:
		return sortRule{}, fmt.Errorf("invalid sort direction %q", r.Direction)
	}
	return r, nil
}

// render answers the named properties (the defaults when none), with null
// for unset ones; hs_object_id, createdate and lastmodifieddate always come.
func render(props map[string]string, createdAt, updatedAt time.Time, names []string) object {
	if len(names) == 0 {
		names = defaultProperties
	}
	o := object{
		ID:         props["hs_object_id"],
		Properties: map[string]*string{},
		CreatedAt:  createdAt.Format(dateLayout),
		UpdatedAt:  updatedAt.Format(dateLayout),
	}
	for _, n := range append([]string{"hs_object_id", "createdate", "lastmodifieddate"}, names...) {
		if v, ok := props[n]; ok {
			o.Properties[n] = &v
		} else {
			o.Properties[n] = nil
		}
	}
	return o
}

var knownOperators = map[string]bool{
	"EQ": true, "NEQ": true, "LT": true, "LTE": true, "GT": true, "GTE": true,
	"BETWEEN": true, "NOT_BETWEEN": true, "IN": true, "NOT_IN": true,
	"HAS_PROPERTY": true, "NOT_HAS_PROPERTY": true,
	"CONTAINS_TOKEN": true, "NOT_CONTAINS_TOKEN": true,
}

// matcher is a request's filterGroups with their values parsed once.
type matcher [][]compiledFilter

type compiledFilter struct {
	filter
	// num and high are the values as integers (ids, epoch ms) or instants.
	num, high     int64
	numOK, highOK bool
}

func compile(groups []filterGroup) matcher {
	m := make(matcher, len(groups))
	for i, g := range groups {
		for _, f := range g.Filters {
			c := compiledFilter{filter: f}
			c.num, c.numOK = parseInstant(string(f.Value))
			c.high, c.highOK = parseInstant(string(f.HighValue))
			m[i] = append(m[i], c)
		}
	}
	return m
}

// minID returns the id search may start at: with one group holding
// hs_object_id GT or GTE, no lower id matches.
func (m matcher) minID() int64 {
	if len(m) != 1 {
		return 0
	}
	var lo int64
	for _, f := range m[0] {
		if f.PropertyName != "hs_object_id" || !f.numOK {
			continue
		}
		switch f.Operator {
		case "GT":
			lo = max(lo, f.num+1)
		case "GTE":
			lo = max(lo, f.num)
		}
	}
	return lo
}

// match ORs the groups and ANDs each group's filters; no group matches
// everything.
func (m matcher) match(id int64, v version) bool {
	if len(m) == 0 {
		return true
	}
	for _, g := range m {
		ok := true
		for i := range g {
			if !g[i].match(id, v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// compare orders the contact's value of the filter's property against
// b (bNum being b parsed, when bOK): ids and dates as integers, the rest
// by compareProps.
func (f *compiledFilter) compare(id int64, ver version, value string, b string, bNum int64, bOK bool) int {
	if bOK {
		switch f.PropertyName {
		case "hs_object_id":
			return compareInt(id, bNum)
		case "createdate", "lastmodifieddate":
			ms, _ := ver.millis(f.PropertyName)
			return compareInt(ms, bNum)
		}
	}
	return compareProps(f.PropertyName, value, b)
}

func (f *compiledFilter) match(id int64, ver version) bool {
	var v string
	has := true
	switch f.PropertyName {
	case "hs_object_id", "createdate", "lastmodifieddate":
		// Always set; compared as integers when the value parses.
		if !f.numOK || (f.HighValue != "" && !f.highOK) || len(f.Values) > 0 {
			v = ver.props[f.PropertyName]
		}
	default:
		v, has = ver.props[f.PropertyName]
	}
	cmp := func(b string) int {
		n, ok := parseInstant(b)
		return f.compare(id, ver, v, b, n, ok)
	}
	switch f.Operator {
	case "HAS_PROPERTY":
		return has
	case "NOT_HAS_PROPERTY":
		return !has
	case "NEQ":
		return !has || f.compare(id, ver, v, string(f.Value), f.num, f.numOK) != 0
	case "NOT_IN":
		for _, x := range f.Values {
			if has && cmp(x) == 0 {
				return false
			}
		}
		return true
	case "NOT_CONTAINS_TOKEN":
		return !has || !containsToken(v, string(f.Value))
	}
	if !has {
		return false
	}
	c := f.compare(id, ver, v, string(f.Value), f.num, f.numOK)
	switch f.Operator {
	case "EQ":
		return c == 0
	case "LT":
		return c < 0
	case "LTE":
		return c <= 0
	case "GT":
		return c > 0
	case "GTE":
		return c >= 0
	case "BETWEEN":
		return c >= 0 && f.compare(id, ver, v, string(f.HighValue), f.high, f.highOK) <= 0
	case "NOT_BETWEEN":
		return c < 0 || f.compare(id, ver, v, string(f.HighValue), f.high, f.highOK) > 0
	case "IN":
		for _, x := range f.Values {
			if cmp(x) == 0 {
				return true
			}
		}
		return false
	case "CONTAINS_TOKEN":
		return containsToken(v, string(f.Value))
	}
	return false
}

func containsToken(v, token string) bool {
	token = strings.Trim(strings.ToLower(token), "*")
	return token == "" || strings.Contains(strings.ToLower(v), token)
}

// matchQuery is the free-text query: a case-insensitive substring of
// email, firstname, lastname, phone or company.
func matchQuery(q string, props map[string]string) bool {
	if q == "" {
		return true
	}
	q = strings.ToLower(q)
	for _, p := range []string{"email", "firstname", "lastname", "phone", "company"} {
		if strings.Contains(strings.ToLower(props[p]), q) {
			return true
		}
	}
	return false
}

// compareProps orders a stored value a against b: as instants for date
// properties, as numbers when both are numbers (ids are compared exactly),
// else as case-insensitive strings. An empty value sorts first.
func compareProps(name, a, b string) int {
	if dateProperties[name] {
		ta, oka := parseInstant(a)
		tb, okb := parseInstant(b)
		if oka && okb {
			return compareInt(ta, tb)
		}
	}
	if na, err := strconv.ParseInt(a, 10, 64); err == nil {
		if nb, err := strconv.ParseInt(b, 10, 64); err == nil {
			return compareInt(na, nb)
		}
	}
	if na, ok := new(big.Rat).SetString(a); ok && a != "" {
		if nb, ok := new(big.Rat).SetString(b); ok && b != "" {
			return na.Cmp(nb)
		}
	}
	return strings.Compare(strings.ToLower(a), strings.ToLower(b))
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// parseInstant reads epoch milliseconds, RFC 3339 or a date.
func parseInstant(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), true
		}
	}
	return 0, false
}

// millis returns a date property of the version as epoch milliseconds.
func (v version) millis(name string) (int64, bool) {
	switch name {
	case "createdate":
		return v.createdAt.UnixMilli(), true
	case "lastmodifieddate":
		return v.updatedAt.UnixMilli(), true
	}
	return 0, false
}
