package pipedriveemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Activities, activity types and users, as Pipedrive documents them
// (../FACTS.md, "Activities"):
//
//   - API v2 GET /api/v2/activities (person_id: activities whose primary
//     participant is the person; done; sort_by id, update_time, add_time
//     or due_date; sort_direction; limit at most 500; cursor),
//     GET/PATCH /api/v2/activities/{id}, POST /api/v2/activities. Writes
//     are strict: unknown keys, person_id (read-only in v2: "Add a primary
//     participant to set person_id instead"), a type that is no active
//     activity type's key_string, due_date not YYYY-MM-DD, due_time or
//     duration not HH:MM, done not a boolean, an owner_id of no user and a
//     participant of no person are 400.
//   - API v1 GET /v1/activityTypes, POST /v1/activityTypes (name and
//     icon_key required, icon_key one of the documented icons; key_string
//     is made from the name and cannot change). The company starts with
//     Pipedrive's default types call, meeting, task, deadline, email and
//     lunch.
//   - API v1 GET /v1/users/find?term=&search_by_email=1.

// The activity routes.
const (
	RouteListActivities   Route = "GET /api/v2/activities"
	RouteGetActivity      Route = "GET /api/v2/activities/{id}"
	RouteAddActivity      Route = "POST /api/v2/activities"
	RouteUpdateActivity   Route = "PATCH /api/v2/activities/{id}"
	RouteListActivityType Route = "GET /v1/activityTypes"
	RouteAddActivityType  Route = "POST /v1/activityTypes"
	RouteFindUsers        Route = "GET /v1/users/find"
)

// Activity is an activity as the server stores it.
type Activity struct {
	ID         int64
	Subject    string
	Type       string
	OwnerID    int64
	PersonID   int64 // the primary participant
	DueDate    string
	DueTime    string
	Duration   string
	Done       bool
	Note       string
	AddTime    time.Time
	UpdateTime time.Time
}

// ActivityType is an activity type.
type ActivityType struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	IconKey   string `json:"icon_key"`
	KeyString string `json:"key_string"`
	Active    bool   `json:"active_flag"`
	IsCustom  bool   `json:"is_custom_flag"`
	OrderNr   int    `json:"order_nr"`
}

// User is a user of the company.
type User struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Email  string `json:"email"`
	Active bool   `json:"active_flag"`
}

// activityStore is the server's activity state.
type activityStore struct {
	acts   map[int64]*Activity
	nextID int64
	types  []*ActivityType
	users  []User
	// refuseTypes makes POST /v1/activityTypes answer 403, as for a
	// user who is no admin.
	refuseTypes bool
}

var iconKeys = strings.Fields(`task email meeting deadline call lunch calendar downarrow document smartphone camera
	scissors cogs bubble uparrow checkbox signpost shuffle addressbook linegraph picture car world search clip sound
	brush key padlock pricetag suitcase finish plane loop wifi truck cart bulb bell presentation`)

func (s *Server) actsLocked() *activityStore {
	if s.acts == nil {
		s.acts = &activityStore{acts: map[int64]*Activity{}, nextID: 1}
		for i, n := range []string{"Call", "Meeting", "Task", "Deadline", "Email", "Lunch"} {
			k := strings.ToLower(n)
			s.acts.types = append(s.acts.types, &ActivityType{ID: int64(i + 1), Name: n, IconKey: k, KeyString: k, Active: true, OrderNr: i + 1})
		}
	}
	return s.acts
}

// AddUser adds a user of the company and returns its id.
func (s *Server) AddUser(name, email string, active bool) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.actsLocked()
	id := int64(1000 + len(st.users) + 1)
	st.users = append(st.users, User{ID: id, Name: name, Email: email, Active: active})
	return id
}

// RefuseActivityTypes makes adding activity types answer 403, as
// Pipedrive does for a user without admin rights.
func (s *Server) RefuseActivityTypes() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actsLocked().refuseTypes = true
}

// Activities returns the stored activities, by id.
func (s *Server) Activities() []Activity {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.actsLocked()
	out := make([]Activity, 0, len(st.acts))
	for _, a := range st.acts {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ActivityTypes returns the company's activity types.
func (s *Server) ActivityTypes() []ActivityType {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []ActivityType
	for _, t := range s.actsLocked().types {
		out = append(out, *t)
	}
	return out
}

// activityRoute names the activity routes of a request.
func activityRoute(method, p string) (Route, string, bool) {
	if id, found := strings.CutPrefix(p, "/api/v2/activities/"); found && id != "" && !strings.Contains(id, "/") {
		switch method {
		case http.MethodGet:
			return RouteGetActivity, id, true
		case http.MethodPatch:
			return RouteUpdateActivity, id, true
		}
		return RouteUnknown, "", true
	}
	switch method + " " + p {
	case "GET /api/v2/activities":
		return RouteListActivities, "", true
	case "POST /api/v2/activities":
		return RouteAddActivity, "", true
	case "GET /v1/activityTypes":
		return RouteListActivityType, "", true
	case "POST /v1/activityTypes":
		return RouteAddActivityType, "", true
	case "GET /v1/users/find":
		return RouteFindUsers, "", true
	}
	return "", "", false
}

// activityCost is the documented token cost of the activity routes.
func activityCost(route Route) (int64, bool) {
	switch route {
	case RouteGetActivity:
		return 1, true
	case RouteListActivities, RouteListActivityType, RouteFindUsers:
		return 20, true
	case RouteAddActivity, RouteUpdateActivity, RouteAddActivityType:
		return 10, true
	}
	return 0, false
}

// activityRouteLocked answers the activity routes.
func (s *Server) activityRouteLocked(route Route, id string, q url.Values, body []byte) (answer, bool) {
	switch route {
	case RouteListActivities:
		return s.listActivitiesLocked(q), true
	case RouteGetActivity:
		a, ok2 := s.activityLocked(id)
		if !ok2 {
			return fail(http.StatusNotFound, "Activity not found"), true
		}
		return ok(map[string]any{"success": true, "data": activityJSON(a)}), true
	case RouteAddActivity:
		return s.writeActivityLocked("", body), true
	case RouteUpdateActivity:
		return s.writeActivityLocked(id, body), true
	case RouteListActivityType:
		return ok(map[string]any{"success": true, "data": s.actsLocked().types}), true
	case RouteAddActivityType:
		return s.addActivityTypeLocked(body), true
	case RouteFindUsers:
		return s.findUsersLocked(q), true
	}
	return answer{}, false
}

func (s *Server) activityLocked(id string) (*Activity, bool) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, false
	}
	a := s.actsLocked().acts[n]
	return a, a != nil
}

func activityJSON(a *Activity) map[string]any {
	var participants []map[string]any
	var person any
	if a.PersonID != 0 {
		person = a.PersonID
		participants = []map[string]any{{"person_id": a.PersonID, "primary": true}}
	}
	nilIf := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	return map[string]any{"id": a.ID, "subject": a.Subject, "type": a.Type, "owner_id": a.OwnerID, "creator_user_id": a.OwnerID,
		"is_deleted": false, "add_time": rfc3339(a.AddTime), "update_time": rfc3339(a.UpdateTime), "deal_id": nil, "lead_id": nil,
		"person_id": person, "org_id": nil, "project_id": nil, "due_date": nilIf(a.DueDate), "due_time": nilIf(a.DueTime),
		"duration": nilIf(a.Duration), "busy": false, "done": a.Done, "participants": participants, "note": nilIf(a.Note),
		"public_description": nil, "priority": nil, "location": nil, "attendees": nil}
}

var (
	activityKeys = map[string]bool{"subject": true, "type": true, "owner_id": true, "deal_id": true, "lead_id": true, "person_id": true,
		"org_id": true, "project_id": true, "due_date": true, "due_time": true, "duration": true, "busy": true, "done": true,
		"location": true, "participants": true, "attendees": true, "public_description": true, "priority": true, "note": true}
	hhmm = regexp.MustCompile(`^\d{2}:[0-5]\d$`)
)

// writeActivityLocked creates (id "") or updates an activity.
func (s *Server) writeActivityLocked(id string, body []byte) answer {
	st := s.actsLocked()
	m, err := decodeStrict(body, activityKeys)
	if err != nil {
		return badRequest("%v", err)
	}
	var a Activity
	if id != "" {
		cur, found := s.activityLocked(id)
		if !found {
			return fail(http.StatusNotFound, "Activity not found")
		}
		a = *cur
	} else {
		a.Type = "task"
	}
	for _, k := range sortedRawKeys(m) {
		raw := m[k]
		var err error
		switch k {
		case "person_id":
			err = fmt.Errorf("'person_id' is a read-only field. Add a primary participant to set 'person_id' instead")
		case "subject", "note":
			dst := map[string]*string{"subject": &a.Subject, "note": &a.Note}[k]
			err = strictString(raw, dst)
		case "type":
			if err = strictString(raw, &a.Type); err == nil && !st.activeType(a.Type) {
				err = fmt.Errorf("invalid activity type %q", a.Type)
			}
		case "due_date":
			if err = strictString(raw, &a.DueDate); err == nil && !dateOnly.MatchString(a.DueDate) {
				err = fmt.Errorf("due_date must be in the format YYYY-MM-DD")
			}
		case "due_time", "duration":
			dst := map[string]*string{"due_time": &a.DueTime, "duration": &a.Duration}[k]
			if err = strictString(raw, dst); err == nil && *dst != "" && !hhmm.MatchString(*dst) {
				err = fmt.Errorf("%s must be in the format HH:MM", k)
			}
		case "done":
			if json.Unmarshal(raw, &a.Done) != nil {
				err = fmt.Errorf("done must be a boolean")
			}
		case "owner_id":
			if err = strictInt(raw, &a.OwnerID); err == nil && !st.hasUser(a.OwnerID) {
				err = fmt.Errorf("user %d not found", a.OwnerID)
			}
		case "participants":
			err = s.participantsLocked(raw, &a)
		}
		if err != nil {
			return badRequest("%v", err)
		}
	}
	now := s.stampLocked()
	a.UpdateTime = now
	if id == "" {
		a.ID, a.AddTime = st.nextID, now
		st.nextID++
		if a.OwnerID == 0 {
			a.OwnerID = 1 // the token's user
		}
	}
	st.acts[a.ID] = &a
	return ok(map[string]any{"success": true, "data": activityJSON(&a)})
}

func (s *Server) participantsLocked(raw json.RawMessage, a *Activity) error {
	var ps []struct {
		PersonID *int64 `json:"person_id"`
		Primary  bool   `json:"primary"`
	}
	if err := json.Unmarshal(raw, &ps); err != nil {
		return fmt.Errorf("participants must be a list of {person_id, primary}")
	}
	a.PersonID = 0
	for _, p := range ps {
		if p.PersonID == nil {
			return fmt.Errorf("participants: person_id is required")
		}
		if _, live := s.liveLocked(strconv.FormatInt(*p.PersonID, 10)); !live {
			return fmt.Errorf("person %d not found", *p.PersonID)
		}
		if p.Primary || a.PersonID == 0 {
			a.PersonID = *p.PersonID
		}
	}
	return nil
}

func sortedRawKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (st *activityStore) activeType(key string) bool {
	for _, t := range st.types {
		if t.KeyString == key && t.Active {
			return true
		}
	}
	return false
}

func (st *activityStore) hasUser(id int64) bool {
	for _, u := range st.users {
		if u.ID == id {
			return true
		}
	}
	return id == 1
}

// listActivitiesLocked lists activities, filtered and sorted as the
// query says, a cursor page at a time. The cursor is the position of the
// next page's first activity in the sorted, filtered list.
func (s *Server) listActivitiesLocked(q url.Values) answer {
	for k := range q {
		switch k {
		case "person_id", "done", "sort_by", "sort_direction", "limit", "cursor", "owner_id", "ids", "updated_since", "updated_until":
		default:
			return badRequest("unknown query parameter %q", k)
		}
	}
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return badRequest("limit must be between 1 and 500")
		}
		limit = n
	}
	var person int64
	if v := q.Get("person_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return badRequest("person_id must be an integer")
		}
		person = n
	}
	by := q.Get("sort_by")
	if by == "" {
		by = "id"
	}
	if by != "id" && by != "update_time" && by != "add_time" && by != "due_date" {
		return badRequest("sort_by must be one of id, update_time, add_time, due_date")
	}
	desc := q.Get("sort_direction") == "desc"
	var list []*Activity
	for _, a := range s.actsLocked().acts {
		if (person == 0 || a.PersonID == person) && (q.Get("done") == "" || strconv.FormatBool(a.Done) == q.Get("done")) {
			list = append(list, a)
		}
	}
	key := func(a *Activity) string {
		switch by {
		case "update_time":
			return rfc3339(a.UpdateTime)
		case "add_time":
			return rfc3339(a.AddTime)
		case "due_date":
			return a.DueDate + " " + a.DueTime
		}
		return ""
	}
	sort.Slice(list, func(i, j int) bool {
		ki, kj := key(list[i]), key(list[j])
		less := ki < kj || (ki == kj && list[i].ID < list[j].ID)
		if desc {
			return !less
		}
		return less
	})
	start := 0
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "a"))
		if err != nil || n < 0 || !strings.HasPrefix(c, "a") {
			return badRequest("invalid cursor")
		}
		start = min(n, len(list))
	}
	end := min(start+limit, len(list))
	data := make([]map[string]any, 0, end-start)
	for _, a := range list[start:end] {
		data = append(data, activityJSON(a))
	}
	var next any
	if end < len(list) {
		next = "a" + strconv.Itoa(end)
	}
	return ok(map[string]any{"success": true, "data": data, "additional_data": map[string]any{"next_cursor": next}})
}

// addActivityTypeLocked adds a custom activity type; its key_string is
// made from its name.
func (s *Server) addActivityTypeLocked(body []byte) answer {
	st := s.actsLocked()
	if st.refuseTypes {
		return fail(http.StatusForbidden, "You do not have permissions to add activity types")
	}
	m, err := decodeStrict(body, map[string]bool{"name": true, "icon_key": true, "color": true})
	if err != nil {
		return badRequest("%v", err)
	}
	var t ActivityType
	if strictString(m["name"], &t.Name) != nil || strings.TrimSpace(t.Name) == "" {
		return badRequest("name is required")
	}
	if strictString(m["icon_key"], &t.IconKey) != nil || !contains(iconKeys, t.IconKey) {
		return badRequest("icon_key must be one of %s", strings.Join(iconKeys, ", "))
	}
	t.KeyString = keyString(t.Name)
	for n := 2; st.hasKey(t.KeyString); n++ {
		t.KeyString = fmt.Sprintf("%s%d", keyString(t.Name), n)
	}
	t.ID, t.Active, t.IsCustom, t.OrderNr = int64(len(st.types)+1), true, true, len(st.types)+1
	st.types = append(st.types, &t)
	return ok(map[string]any{"success": true, "data": t})
}

func (st *activityStore) hasKey(k string) bool {
	for _, t := range st.types {
		if t.KeyString == k {
			return true
		}
	}
	return false
}

func keyString(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteRune('_')
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}

// findUsersLocked finds users by name, or by e-mail with
// search_by_email=1; data is null when none matches.
func (s *Server) findUsersLocked(q url.Values) answer {
	term := strings.ToLower(strings.TrimSpace(q.Get("term")))
	if term == "" {
		return badRequest("term is required")
	}
	byEmail := q.Get("search_by_email") == "1"
	var found []User
	for _, u := range s.actsLocked().users {
		field := strings.ToLower(u.Name)
		if byEmail {
			field = strings.ToLower(u.Email)
		}
		if strings.Contains(field, term) {
			found = append(found, u)
		}
	}
	if len(found) == 0 {
		return ok(map[string]any{"success": true, "data": nil})
	}
	return ok(map[string]any{"success": true, "data": found})
}
