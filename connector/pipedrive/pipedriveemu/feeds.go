package pipedriveemu

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// v1Time is API v1's time format (UTC).
const v1Time = "2006-01-02 15:04:05"

// standardFields are the person fields every company has, as
// GET /api/v2/personFields lists them.
var standardFields = []struct{ code, name, typ string }{
	{"name", "Name", "varchar"}, {"first_name", "First name", "varchar"}, {"last_name", "Last name", "varchar"},
	{"org_id", "Organization", "org"}, {"owner_id", "Owner", "user"}, {"emails", "Email", "varchar"},
	{"phones", "Phone", "phone"}, {"add_time", "Person created", "date"}, {"update_time", "Update time", "date"},
	{"label_ids", "Labels", "set"}, {"visible_to", "Visible to", "visible_to"},
}

func (s *Server) personFieldsLocked(q url.Values) answer {
	type option struct {
		ID    int    `json:"id"`
		Label string `json:"label"`
	}
	type field struct {
		Name     string   `json:"field_name"`
		Code     string   `json:"field_code"`
		Type     string   `json:"field_type"`
		Custom   bool     `json:"is_custom_field"`
		Optional bool     `json:"is_optional_response_field"`
		Options  []option `json:"options"`
	}
	var all []field
	for _, f := range standardFields {
		all = append(all, field{Name: f.name, Code: f.code, Type: f.typ})
	}
	for _, f := range s.fields {
		fj := field{Name: f.Name, Code: f.Key, Type: f.Type, Custom: true}
		for i, o := range f.Options {
			fj.Options = append(fj.Options, option{ID: i + 1, Label: o})
		}
		all = append(all, fj)
	}
	start, limit, err := pageOf(q, "cursor")
	if err != nil {
		return badRequest("%v", err)
	}
	var next any
	end := min(len(all), start+limit)
	if end < len(all) {
		next = strconv.Itoa(end)
	}
	if start > len(all) {
		start = len(all)
	}
	return ok(map[string]any{"success": true, "data": all[start:end], "additional_data": map[string]any{"next_cursor": next}})
}

// pageOf reads limit (1 to 500, default 100) and the offset parameter.
func pageOf(q url.Values, offsetParam string) (int, int, error) {
	start, limit := 0, defaultLimit
	var err error
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > maxLimit {
			return 0, 0, fmt.Errorf("limit must be an integer between 1 and %d", maxLimit)
		}
	}
	if v := q.Get(offsetParam); v != "" {
		if start, err = strconv.Atoi(v); err != nil || start < 0 {
			return 0, 0, fmt.Errorf("invalid %s", offsetParam)
		}
	}
	return start, limit, nil
}

func (s *Server) listOrgsLocked(q url.Values) answer {
	type org struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	data := []org{}
	v := q.Get("ids")
	if v == "" {
		return badRequest("this server lists organizations by ids only")
	}
	parts := strings.Split(v, ",")
	if len(parts) > maxIDs {
		return badRequest("ids takes at most %d ids", maxIDs)
	}
	for _, p := range parts {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
		if err != nil {
			return badRequest("ids must be comma separated integers")
		}
		if name, found := s.orgs[n]; found {
			data = append(data, org{ID: n, Name: name})
		}
	}
	return ok(map[string]any{"success": true, "data": data, "additional_data": map[string]any{"next_cursor": nil}})
}

// searchOrgsLocked answers exact_match name searches (case-insensitive),
// the only kind the connector makes.
func (s *Server) searchOrgsLocked(q url.Values) answer {
	term := q.Get("term")
	if len([]rune(term)) < 1 || (q.Get("exact_match") != "true" && len([]rune(term)) < 2) {
		return badRequest("term must be at least 2 characters (1 with exact_match)")
	}
	if f := q.Get("fields"); f != "" && f != "name" {
		return badRequest("this server searches organizations by name only")
	}
	type item struct {
		Score float64        `json:"result_score"`
		Item  map[string]any `json:"item"`
	}
	items := []item{}
	ids := make([]int64, 0, len(s.orgs))
	for id := range s.orgs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		name := s.orgs[id]
		if strings.EqualFold(name, term) || (q.Get("exact_match") != "true" && strings.Contains(strings.ToLower(name), strings.ToLower(term))) {
			items = append(items, item{Score: 1, Item: map[string]any{"id": id, "type": "organization", "name": name}})
		}
	}
	return ok(map[string]any{"success": true, "data": map[string]any{"items": items}, "additional_data": map[string]any{"next_cursor": nil}})
}

func (s *Server) addOrgRouteLocked(body []byte) answer {
	m, err := decodeStrict(body, map[string]bool{"name": true, "owner_id": true, "visible_to": true, "label_ids": true, "address": true, "custom_fields": true})
	if err != nil {
		return badRequest("%v", err)
	}
	var name string
	if raw, has := m["name"]; !has || strictString(raw, &name) != nil || name == "" {
		return badRequest("name is required")
	}
	id := s.addOrgLocked(name)
	return ok(map[string]any{"success": true, "data": map[string]any{"id": id, "name": name}})
}

// recentsLocked answers GET /v1/recents for items=person: every person
// whose last change is strictly after since_timestamp, oldest first.
func (s *Server) recentsLocked(q url.Values) answer {
	since, err := time.Parse(v1Time, q.Get("since_timestamp"))
	if err != nil {
		return badRequest("since_timestamp is required, in the format YYYY-MM-DD HH:MM:SS")
	}
	start, limit, err := pageOf(q, "start")
	if err != nil {
		return badRequest("%v", err)
	}
	var changed []*Person
	if items := q.Get("items"); items == "" || contains(strings.Split(items, ","), "person") {
		for _, p := range s.persons {
			if p.UpdateTime.After(since) && !(p.Deleted && s.opts.RecentsOmitDeleted) {
				changed = append(changed, p)
			}
		}
	}
	sort.Slice(changed, func(i, j int) bool {
		if !changed[i].UpdateTime.Equal(changed[j].UpdateTime) {
			return changed[i].UpdateTime.Before(changed[j].UpdateTime)
		}
		return idOf(changed[i]) < idOf(changed[j])
	})
	page := changed[min(start, len(changed)):min(start+limit, len(changed))]
	data := make([]map[string]any, 0, len(page))
	last := ""
	for _, p := range page {
		data = append(data, map[string]any{"item": "person", "id": idOf(p), "data": s.v1PersonLocked(p)})
		last = p.UpdateTime.Format(v1Time)
	}
	more := start+limit < len(changed)
	pg := map[string]any{"start": start, "limit": limit, "more_items_in_collection": more}
	if more {
		pg["next_start"] = start + limit
	}
	return ok(map[string]any{"success": true, "data": data, "additional_data": map[string]any{
		"since_timestamp": since.Format(v1Time), "last_timestamp_on_page": last, "pagination": pg,
	}})
}

// v1PersonLocked is a person as API v1 shows it in recents.
func (s *Server) v1PersonLocked(p *Person) map[string]any {
	first, last := splitName(p.Name)
	m := map[string]any{
		"id": idOf(p), "name": p.Name, "first_name": first, "last_name": last, "active_flag": !p.Deleted,
		"owner_id": p.OwnerID, "email": p.Emails, "phone": p.Phones,
		"add_time": p.AddTime.Format(v1Time), "update_time": p.UpdateTime.Format(v1Time), "org_id": nil,
	}
	if p.OrgID != 0 {
		m["org_id"] = p.OrgID
	}
	if p.Deleted {
		m["delete_time"] = p.UpdateTime.Format(v1Time)
	}
	if p.MergeWhatID != "" {
		n, _ := strconv.ParseInt(p.MergeWhatID, 10, 64)
		m["merge_what_id"] = n
	}
	return m
}
