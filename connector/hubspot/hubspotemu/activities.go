package hubspotemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Engagements: calls and communications (SMS, WhatsApp, LinkedIn
// messages) logged on contacts, as HubSpot documents them
// (connector/hubspot/FACTS.md, "Calls and texts"): POST
// /crm/v3/objects/{calls|communications} with properties and
// associations, PATCH and GET by id, POST .../search on a property (EQ),
// the properties API for custom properties (GET one, POST a group, POST
// a property), and GET /crm/v3/owners by e-mail.

// The engagement routes.
const (
	RouteEngagementCreate Route = "POST /crm/v3/objects/{engagements}"
	RouteEngagementUpdate Route = "PATCH /crm/v3/objects/{engagements}/{id}"
	RouteEngagementGet    Route = "GET /crm/v3/objects/{engagements}/{id}"
	RouteEngagementSearch Route = "POST /crm/v3/objects/{engagements}/search"
	RoutePropertyGet      Route = "GET /crm/v3/properties/{engagements}/{name}"
	RoutePropertyCreate   Route = "POST /crm/v3/properties/{engagements}"
	RouteGroupCreate      Route = "POST /crm/v3/properties/{engagements}/groups"
	RouteOwners           Route = "GET /crm/v3/owners"
)

// Object types of engagements, and the HUBSPOT_DEFINED association type
// of each to a contact.
const (
	ObjectCalls          = "calls"
	ObjectCommunications = "communications"
	AssocCallToContact   = 194
	AssocCommToContact   = 81
)

var assocToContact = map[string]int{ObjectCalls: AssocCallToContact, ObjectCommunications: AssocCommToContact}

// defaultEngagementProps are the default properties of each engagement
// type that the documentation lists.
var defaultEngagementProps = map[string][]string{
	ObjectCalls: {"hs_timestamp", "hs_call_body", "hs_call_callee_object_id", "hs_call_callee_object_type", "hs_call_direction",
		"hs_call_disposition", "hs_call_duration", "hs_call_from_number", "hs_call_recording_url", "hs_call_status", "hs_call_title",
		"hs_call_source", "hs_call_to_number", "hubspot_owner_id", "hs_activity_type", "hs_attachment_ids"},
	ObjectCommunications: {"hs_timestamp", "hs_communication_channel_type", "hs_communication_logged_from", "hs_communication_body",
		"hubspot_owner_id"},
}

// Documented values.
var (
	callDirections = []string{"INBOUND", "OUTBOUND"}
	callStatuses   = []string{"BUSY", "CALLING_CRM_USER", "CANCELED", "COMPLETED", "CONNECTING", "FAILED", "IN_PROGRESS", "NO_ANSWER", "QUEUED", "RINGING"}
	channelTypes   = []string{"WHATS_APP", "LINKEDIN_MESSAGE", "SMS"}
)

// Engagement is a logged call or communication, for tests.
type Engagement struct {
	ID         string
	Type       string // ObjectCalls or ObjectCommunications
	Properties map[string]string
	// Contacts are the contacts it is associated with.
	Contacts  []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Owner is a HubSpot user that can own records.
type Owner struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// engagements is the server's engagement store; Server.mu guards it.
type engagements struct {
	objects map[string]*Engagement // by id
	order   []*Engagement
	props   map[string]map[string]bool // object type -> custom property names
	groups  map[string]map[string]bool
	owners  []Owner
}

func (s *Server) engLocked() *engagements {
	if s.eng == nil {
		s.eng = &engagements{objects: map[string]*Engagement{}, props: map[string]map[string]bool{}, groups: map[string]map[string]bool{}}
	}
	return s.eng
}

// Engagements returns the engagements of objectType, oldest first.
func (s *Server) Engagements(objectType string) []Engagement {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Engagement
	for _, e := range s.engLocked().order {
		if e.Type == objectType {
			c := *e
			c.Properties = maps(e.Properties)
			c.Contacts = slices.Clone(e.Contacts)
			out = append(out, c)
		}
	}
	return out
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// AddOwner adds an owner with email and returns its id.
func (s *Server) AddOwner(email string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	eng := s.engLocked()
	id := strconv.Itoa(70000 + len(eng.owners))
	eng.owners = append(eng.owners, Owner{ID: id, Email: email})
	return id
}

// engagementRoute names the route of an engagement request, or
// RouteUnknown.
func engagementRoute(method, p string) (Route, string, string) {
	for _, typ := range []string{ObjectCalls, ObjectCommunications} {
		objects, props := "/crm/v3/objects/"+typ, "/crm/v3/properties/"+typ
		switch {
		case method == http.MethodPost && p == objects:
			return RouteEngagementCreate, typ, ""
		case method == http.MethodPost && p == objects+"/search":
			return RouteEngagementSearch, typ, ""
		case method == http.MethodPatch && strings.HasPrefix(p, objects+"/"):
			return RouteEngagementUpdate, typ, p[len(objects)+1:]
		case method == http.MethodGet && strings.HasPrefix(p, objects+"/"):
			return RouteEngagementGet, typ, p[len(objects)+1:]
		case method == http.MethodPost && p == props+"/groups":
			return RouteGroupCreate, typ, ""
		case method == http.MethodPost && p == props:
			return RoutePropertyCreate, typ, ""
		case method == http.MethodGet && strings.HasPrefix(p, props+"/"):
			return RoutePropertyGet, typ, p[len(props)+1:]
		}
	}
	if method == http.MethodGet && p == "/crm/v3/owners" {
		return RouteOwners, "", ""
	}
	return RouteUnknown, "", ""
}

// engagementLocked answers an engagement route.
func (s *Server) engagementLocked(route Route, r *http.Request, body []byte) answer {
	_, typ, id := engagementRoute(r.Method, strings.TrimSuffix(r.URL.Path, "/"))
	switch route {
	case RouteEngagementCreate:
		return s.createEngagementLocked(typ, body)
	case RouteEngagementUpdate:
		return s.updateEngagementLocked(typ, id, body)
	case RouteEngagementGet:
		e := s.engLocked().objects[id]
		if e == nil || e.Type != typ {
			return s.errorLocked(http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
		}
		return jsonAnswer(http.StatusOK, renderEngagement(e, queryList(r.URL.Query()["properties"])))
	case RouteEngagementSearch:
		return s.searchEngagementsLocked(typ, body)
	case RoutePropertyGet:
		if !s.knownEngagementProp(typ, id) {
			return s.errorLocked(http.StatusNotFound, "OBJECT_NOT_FOUND", fmt.Sprintf("Unable to find property %s for object type %s", id, typ))
		}
		return jsonAnswer(http.StatusOK, map[string]any{"name": id, "type": "string", "fieldType": "text"})
	case RouteGroupCreate:
		var in struct{ Name, Label string }
		if err := json.Unmarshal(body, &in); err != nil || in.Name == "" || in.Label == "" {
			return s.validationLocked("name and label are required")
		}
		g := s.engLocked().groups
		if g[typ] == nil {
			g[typ] = map[string]bool{}
		}
		if g[typ][in.Name] {
			return s.errorLocked(http.StatusConflict, "CONFLICT", fmt.Sprintf("A property group named %q already exists", in.Name))
		}
		g[typ][in.Name] = true
		return jsonAnswer(http.StatusCreated, map[string]any{"name": in.Name, "label": in.Label, "archived": false})
	case RoutePropertyCreate:
		var in struct{ Name, Label, Type, FieldType, GroupName string }
		if err := json.Unmarshal(body, &in); err != nil || in.Name == "" || in.Label == "" || in.Type == "" || in.FieldType == "" || in.GroupName == "" {
			return s.validationLocked("name, label, type, fieldType and groupName are required")
		}
		if !s.engLocked().groups[typ][in.GroupName] {
			return s.validationLocked(fmt.Sprintf("Property group %s does not exist", in.GroupName))
		}
		if s.knownEngagementProp(typ, in.Name) {
			return s.errorLocked(http.StatusConflict, "CONFLICT", fmt.Sprintf("Property named %q already exists", in.Name))
		}
		p := s.engLocked().props
		if p[typ] == nil {
			p[typ] = map[string]bool{}
		}
		p[typ][in.Name] = true
		return jsonAnswer(http.StatusCreated, map[string]any{"name": in.Name, "label": in.Label, "type": in.Type, "fieldType": in.FieldType, "groupName": in.GroupName})
	case RouteOwners:
		email := strings.ToLower(r.URL.Query().Get("email"))
		res := []Owner{}
		for _, o := range s.engLocked().owners {
			if email == "" || strings.ToLower(o.Email) == email {
				res = append(res, o)
			}
		}
		return jsonAnswer(http.StatusOK, map[string]any{"results": res})
	}
	return s.errorLocked(http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
}

func (s *Server) knownEngagementProp(typ, name string) bool {
	return slices.Contains(defaultEngagementProps[typ], name) || s.engLocked().props[typ][name]
}

type engagementInput struct {
	Properties   map[string]scalarText `json:"properties"`
	Associations []struct {
		To struct {
			ID scalarText `json:"id"`
		} `json:"to"`
		Types []struct {
			AssociationCategory string `json:"associationCategory"`
			AssociationTypeID   int    `json:"associationTypeId"`
		} `json:"types"`
	} `json:"associations"`
}

// checkEngagementProps returns the problem of props, "" when none: an
// unknown property, or a documented value out of its set.
func (s *Server) checkEngagementProps(typ string, props map[string]string, create bool) string {
	for k := range props {
		if !s.knownEngagementProp(typ, k) {
			return fmt.Sprintf("Property \"%s\" does not exist", k)
		}
	}
	if create {
		if _, ok := props["hs_timestamp"]; !ok {
			return "hs_timestamp is required"
		}
	}
	if v, ok := props["hs_timestamp"]; ok {
		if _, ok := parseInstant(v); !ok {
			return fmt.Sprintf("%s was not a valid long or date: hs_timestamp", v)
		}
	}
	check := func(name string, allowed []string) string {
		if v, ok := props[name]; ok && !slices.Contains(allowed, v) {
			return fmt.Sprintf("%s was not one of the allowed options: %s", name, strings.Join(allowed, ", "))
		}
		return ""
	}
	switch typ {
	case ObjectCalls:
		if p := check("hs_call_direction", callDirections); p != "" {
			return p
		}
		if p := check("hs_call_status", callStatuses); p != "" {
			return p
		}
		if v, ok := props["hs_call_duration"]; ok {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return "hs_call_duration must be a number of milliseconds"
			}
		}
	case ObjectCommunications:
		if p := check("hs_communication_channel_type", channelTypes); p != "" {
			return p
		}
		if create && props["hs_communication_logged_from"] != "CRM" {
			return "hs_communication_logged_from must be set to CRM"
		}
	}
	return ""
}

func (s *Server) createEngagementLocked(typ string, body []byte) answer {
	var in engagementInput
	if err := json.Unmarshal(body, &in); err != nil {
		return s.validationLocked("Invalid input JSON: " + err.Error())
	}
	props := plain(in.Properties)
	if p := s.checkEngagementProps(typ, props, true); p != "" {
		return s.validationLocked("Property values were not valid: " + p)
	}
	var contacts []string
	for _, a := range in.Associations {
		id := string(a.To.ID)
		if len(a.Types) == 0 {
			return s.validationLocked("association types are required")
		}
		for _, t := range a.Types {
			if t.AssociationCategory != "HUBSPOT_DEFINED" || t.AssociationTypeID != assocToContact[typ] {
				return s.validationLocked(fmt.Sprintf("association type %s/%d is not one from %s to contacts", t.AssociationCategory, t.AssociationTypeID, typ))
			}
		}
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || s.liveLocked(strconv.FormatInt(n, 10)) == nil {
			return s.validationLocked(fmt.Sprintf("No contact with id %s exists", id))
		}
		contacts = append(contacts, id)
	}
	eng := s.engLocked()
	now := s.nowLocked()
	s.nextID++
	e := &Engagement{ID: strconv.FormatInt(s.nextID, 10), Type: typ, Properties: props, Contacts: contacts, CreatedAt: now, UpdatedAt: now}
	eng.objects[e.ID] = e
	eng.order = append(eng.order, e)
	return jsonAnswer(http.StatusCreated, renderEngagement(e, nil))
}

func (s *Server) updateEngagementLocked(typ, id string, body []byte) answer {
	e := s.engLocked().objects[id]
	if e == nil || e.Type != typ {
		return s.errorLocked(http.StatusNotFound, "OBJECT_NOT_FOUND", "resource not found")
	}
	var in engagementInput
	if err := json.Unmarshal(body, &in); err != nil {
		return s.validationLocked("Invalid input JSON: " + err.Error())
	}
	props := plain(in.Properties)
	if p := s.checkEngagementProps(typ, props, false); p != "" {
		return s.validationLocked("Property values were not valid: " + p)
	}
	for k, v := range props {
		e.Properties[k] = v
	}
	e.UpdatedAt = s.nowLocked()
	return jsonAnswer(http.StatusOK, renderEngagement(e, nil))
}

// searchEngagementsLocked answers a search of one EQ filter (the form
// the documentation's examples show for a property).
func (s *Server) searchEngagementsLocked(typ string, body []byte) answer {
	var req searchRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return s.validationLocked("Invalid input JSON: " + err.Error())
	}
	var res []object
	for _, e := range s.engLocked().order {
		if e.Type != typ || !engagementMatches(e, req.FilterGroups) {
			continue
		}
		res = append(res, renderEngagement(e, req.Properties))
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].ID < res[j].ID })
	limit := 10
	if req.Limit != nil {
		limit = *req.Limit
	}
	total := len(res)
	if len(res) > limit {
		res = res[:limit]
	}
	if res == nil {
		res = []object{}
	}
	return jsonAnswer(http.StatusOK, map[string]any{"total": total, "results": res})
}

func engagementMatches(e *Engagement, groups []filterGroup) bool {
	if len(groups) == 0 {
		return true
	}
	for _, g := range groups {
		all := true
		for _, f := range g.Filters {
			v, ok := e.Properties[f.PropertyName]
			switch f.Operator {
			case "EQ":
				all = all && ok && v == string(f.Value)
			case "HAS_PROPERTY":
				all = all && ok && v != ""
			default:
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

func renderEngagement(e *Engagement, names []string) object {
	props := map[string]*string{}
	for k, v := range e.Properties {
		if len(names) == 0 || slices.Contains(names, k) {
			props[k] = &v
		}
	}
	return object{ID: e.ID, Properties: props, CreatedAt: e.CreatedAt.Format(dateLayout), UpdatedAt: e.UpdatedAt.Format(dateLayout)}
}
