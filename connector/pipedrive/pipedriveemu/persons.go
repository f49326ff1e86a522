package pipedriveemu

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	defaultLimit  = 100
	maxLimit      = 500
	maxIDs        = 100
	maxCustomKeys = 15
)

// emailLabels and phoneLabels are the labels the API takes.
var (
	emailLabels = map[string]bool{"work": true, "home": true, "other": true}
	phoneLabels = map[string]bool{"work": true, "home": true, "mobile": true, "other": true}
)

// listParams are the query parameters GET /api/v2/persons knows.
var listParams = map[string]bool{
	"filter_id": true, "ids": true, "owner_id": true, "org_id": true, "deal_id": true,
	"updated_since": true, "updated_until": true, "sort_by": true, "sort_direction": true,
	"include_fields": true, "custom_fields": true, "include_option_labels": true,
	"include_labels": true, "limit": true, "cursor": true,
}

// personJSON is a person as API v2 answers it.
type personJSON struct {
	ID           int64          `json:"id"`
	Name         string         `json:"name"`
	FirstName    string         `json:"first_name"`
	LastName     string         `json:"last_name"`
	OwnerID      int64          `json:"owner_id"`
	OrgID        *int64         `json:"org_id"`
	AddTime      string         `json:"add_time"`
	UpdateTime   string         `json:"update_time"`
	Emails       []Item         `json:"emails"`
	Phones       []Item         `json:"phones"`
	IsDeleted    bool           `json:"is_deleted"`
	VisibleTo    int            `json:"visible_to"`
	LabelIDs     []int          `json:"label_ids"`
	PictureID    *int64         `json:"picture_id"`
	CustomFields map[string]any `json:"custom_fields"`
}

// v2Time is API v2's time format: RFC 3339 in UTC with milliseconds, as
// the migration guide's example 2024-01-01T00:00:00.000Z.
const v2Time = "2006-01-02T15:04:05.000Z07:00"

func rfc3339(t time.Time) string { return t.UTC().Format(v2Time) }

// splitName derives first and last name as Pipedrive shows them: the
// first word, and the rest.
func splitName(name string) (string, string) {
	f, l, _ := strings.Cut(strings.TrimSpace(name), " ")
	return f, strings.TrimSpace(l)
}

func (s *Server) jsonOfLocked(p *Person, keys []string) personJSON {
	first, last := splitName(p.Name)
	j := personJSON{
		ID: idOf(p), Name: p.Name, FirstName: first, LastName: last, OwnerID: p.OwnerID,
		AddTime: rfc3339(p.AddTime), UpdateTime: rfc3339(p.UpdateTime), Emails: p.Emails, Phones: p.Phones,
		IsDeleted: p.Deleted, VisibleTo: 3, LabelIDs: []int{}, CustomFields: map[string]any{},
	}
	if j.Emails == nil {
		j.Emails = []Item{}
	}
	if j.Phones == nil {
		j.Phones = []Item{}
	}
	if p.OrgID != 0 {
		org := p.OrgID
		j.OrgID = &org
	}
	for _, f := range s.fields {
		if keys == nil || contains(keys, f.Key) {
			j.CustomFields[f.Key] = p.Custom[f.Key]
		}
	}
	return j
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cursor is the position of the first person of the next page.
type cursor struct {
	SortBy string `json:"s"`
	Key    int64  `json:"k"`
	ID     int64  `json:"i"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, bool) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.ID < 1 {
		return c, false
	}
	return c, true
}

func sortKey(p *Person, by string) int64 {
	switch by {
	case "update_time":
		return p.UpdateTime.UnixMilli()
	case "add_time":
		return p.AddTime.UnixMilli()
	}
	return idOf(p)
}

// listQuery is a parsed GET /api/v2/persons.
type listQuery struct {
	ids          map[int64]bool
	since, until time.Time
	sortBy       string
	desc         bool
	limit        int
	after        *cursor
	keys         []string
}

func (s *Server) parseListLocked(q url.Values) (listQuery, error) {
	lq := listQuery{sortBy: "id", limit: defaultLimit}
	for k := range q {
		if !listParams[k] {
			return lq, fmt.Errorf("unknown parameter %q", k)
		}
	}
	var err error
	if v := q.Get("limit"); v != "" {
		if lq.limit, err = strconv.Atoi(v); err != nil || lq.limit < 1 || lq.limit > maxLimit {
			return lq, fmt.Errorf("limit must be an integer between 1 and %d", maxLimit)
		}
	}
	if v := q.Get("sort_by"); v != "" {
		if v != "id" && v != "update_time" && v != "add_time" {
			return lq, fmt.Errorf("sort_by must be one of id, update_time, add_time")
		}
		lq.sortBy = v
	}
	switch q.Get("sort_direction") {
	case "", "asc":
	case "desc":
		lq.desc = true
	default:
		return lq, fmt.Errorf("sort_direction must be asc or desc")
	}
	for name, dst := range map[string]*time.Time{"updated_since": &lq.since, "updated_until": &lq.until} {
		if v := q.Get(name); v != "" {
			if *dst, err = time.Parse(time.RFC3339, v); err != nil {
				return lq, fmt.Errorf("%s must be an RFC 3339 date-time, e.g. 2025-01-01T10:20:00Z", name)
			}
		}
	}
	if v := q.Get("ids"); v != "" {
		parts := strings.Split(v, ",")
		if len(parts) > maxIDs {
			return lq, fmt.Errorf("ids takes at most %d ids", maxIDs)
		}
		lq.ids = map[int64]bool{}
		for _, p := range parts {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
			if err != nil || n < 1 {
				return lq, fmt.Errorf("ids must be comma separated integers")
			}
			lq.ids[n] = true
		}
	}
	if v := q.Get("custom_fields"); v != "" {
		lq.keys = strings.Split(v, ",")
		if len(lq.keys) > maxCustomKeys {
			return lq, fmt.Errorf("custom_fields takes at most %d keys", maxCustomKeys)
		}
	}
	if v := q.Get("cursor"); v != "" {
		c, valid := decodeCursor(v)
		if !valid || c.SortBy != lq.sortBy {
			return lq, fmt.Errorf("invalid cursor")
		}
		lq.after = &c
	}
	return lq, nil
}

func (lq listQuery) matches(p *Person) bool {
	if p.Deleted || (lq.ids != nil && !lq.ids[idOf(p)]) {
		return false
	}
	if !lq.since.IsZero() && p.UpdateTime.Before(lq.since) {
		return false
	}
	return lq.until.IsZero() || p.UpdateTime.Before(lq.until)
}

// less orders persons by the sort key, then id, in the query's direction.
func (lq listQuery) less(a, b *Person) bool {
	ka, kb := sortKey(a, lq.sortBy), sortKey(b, lq.sortBy)
	if ka != kb {
		return (ka < kb) != lq.desc
	}
	return (idOf(a) < idOf(b)) != lq.desc
}

// atOrAfter reports whether p is at or after the cursor's person.
func (lq listQuery) atOrAfter(p *Person) bool {
	c := lq.after
	k := sortKey(p, lq.sortBy)
	if k != c.Key {
		return (k > c.Key) != lq.desc
	}
	return idOf(p) == c.ID || (idOf(p) > c.ID) != lq.desc
}

func (s *Server) listPersonsLocked(q url.Values) answer {
	lq, err := s.parseListLocked(q)
	if err != nil {
		return badRequest("%v", err)
	}
	idx := s.indexLocked(lq.sortBy)
	n := len(idx.persons)
	// pos(i) walks the index in the query's direction.
	pos := func(i int) int {
		if lq.desc {
			return n - 1 - i
		}
		return i
	}
	i := 0
	if lq.after != nil {
		i = sort.Search(n, func(i int) bool { return lq.atOrAfter(idx.persons[pos(i)]) })
	}
	var page []*Person
	var next any
	for ; i < n; i++ {
		p := idx.persons[pos(i)]
		if !lq.matches(p) {
			continue
		}
		if len(page) == lq.limit {
			next = encodeCursor(cursor{SortBy: lq.sortBy, Key: sortKey(p, lq.sortBy), ID: idOf(p)})
			break
		}
		page = append(page, p)
	}
	data := make([]json.RawMessage, 0, len(page))
	for _, p := range page {
		data = append(data, s.answerLocked(p, lq.keys))
	}
	return ok(map[string]any{"success": true, "data": data, "additional_data": map[string]any{"next_cursor": next}})
}

// answerLocked is a person's JSON, cached when it carries every custom
// field.
func (s *Server) answerLocked(p *Person, keys []string) json.RawMessage {
	if keys != nil {
		b, _ := json.Marshal(s.jsonOfLocked(p, keys))
		return b
	}
	if b, ok := s.answered[idOf(p)]; ok {
		return b
	}
	b, _ := json.Marshal(s.jsonOfLocked(p, nil))
	s.answered[idOf(p)] = b
	return b
}

// sortedIndex is every person, deleted or not, by (sort key, id)
// ascending.
type sortedIndex struct {
	version int64
	persons []*Person
}

func (s *Server) indexLocked(by string) sortedIndex {
	if idx, ok := s.index[by]; ok && idx.version == s.version {
		return idx
	}
	idx := sortedIndex{version: s.version, persons: make([]*Person, 0, len(s.persons))}
	for _, p := range s.persons {
		idx.persons = append(idx.persons, p)
	}
	asc := listQuery{sortBy: by}
	sort.Slice(idx.persons, func(i, j int) bool { return asc.less(idx.persons[i], idx.persons[j]) })
	s.index[by] = idx
	return idx
}

func (s *Server) getPersonLocked(id string) answer {
	p, found := s.liveLocked(id)
	if !found {
		return fail(http.StatusNotFound, "Person not found")
	}
	return ok(map[string]any{"success": true, "data": s.jsonOfLocked(p, nil)})
}

func (s *Server) deletePersonLocked(id string) answer {
	p, found := s.liveLocked(id)
	if !found {
		return fail(http.StatusNotFound, "Person not found")
	}
	p.Deleted, p.UpdateTime = true, s.stampLocked()
	s.changedLocked(p)
	return ok(map[string]any{"success": true, "data": map[string]any{"id": idOf(p)}})
}
