package hubspotemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// mergedProperty is the property HubSpot sets on the record a merge
// results in: the ids of the records merged into it, semicolon-delimited
// (HubSpot's encoding of multi-value properties), cumulative over merges.
const mergedProperty = "hs_merged_object_ids"

// Merge merges the contact objectIDToMerge into primaryID, as POST
// /crm/v3/objects/contacts/merge does, and returns the id of the merged
// contact.
//
// By default it follows HubSpot's current behaviour (developer changelog,
// "Updated merge functionality for contacts and companies"): a new
// contact with a new id is created, both contacts are merged into it and
// disappear (from search, the list and, unless Options.ArchiveMerged, the
// archived list), and both old
// ids still point to it: reading them (GET by id, batch read) answers the
// merged contact, with its new id. With Options.LegacyMerge the primary
// keeps its id, as before that change. Either way the merged contact
// carries hs_merged_object_ids (the old ids and those merged into them
// before), its lastmodifieddate is the clock, and its values are the
// primary's, completed by the other's where the primary has none.
func (s *Server) Merge(primaryID, objectIDToMerge string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.mergeLocked(primaryID, objectIDToMerge)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(c.id, 10), nil
}

// MergedInto returns the id an old id now points to after merges, and
// whether id was merged away.
func (s *Server) MergedInto(id string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || s.contacts[n] == nil || s.contacts[n].mergedInto == 0 {
		return "", false
	}
	return strconv.FormatInt(s.resolveLocked(s.contacts[n]).id, 10), true
}

// errMerge is a merge refused with HubSpot's status and message.
type errMerge struct {
	status  int
	message string
}

func (e *errMerge) Error() string { return e.message }

func (s *Server) mergeLocked(primaryID, otherID string) (*contact, error) {
	p, o := s.liveLocked(primaryID), s.liveLocked(otherID)
	switch {
	case p == nil || o == nil:
		missing := primaryID
		if p != nil {
			missing = otherID
		}
		return nil, &errMerge{http.StatusNotFound, fmt.Sprintf("No contact with id %s", missing)}
	case p == o:
		return nil, &errMerge{http.StatusBadRequest, "Cannot merge a contact with itself"}
	}
	ids := mergedIDs(p, o)
	props := make(map[string]string, len(p.props)+len(o.props))
	for k, v := range o.props {
		props[k] = v
	}
	for k, v := range p.props {
		props[k] = v
	}
	for _, k := range []string{"hs_object_id", "createdate", "lastmodifieddate", mergedProperty} {
		delete(props, k)
	}
	delete(s.emails, strings.ToLower(o.props["email"]))
	if s.opts.LegacyMerge {
		s.goneLocked(o, p)
		p.props = props
		p.props["hs_object_id"] = strconv.FormatInt(p.id, 10)
		p.props["createdate"] = p.createdAt.Format(dateLayout)
		// The primary's own id is no id merged into it.
		p.props[mergedProperty] = joinIDs(slices.DeleteFunc(ids, func(n int64) bool { return n == p.id }))
		s.touchLocked(p)
		return p, nil
	}
	delete(s.emails, strings.ToLower(p.props["email"]))
	created := p.createdAt
	if o.createdAt.Before(created) {
		created = o.createdAt
	}
	c := s.createLocked(props)
	// Not documented: the merged contact keeps the older createdate
	// (what the tools built on the merge report).
	c.createdAt = created
	c.props["createdate"] = created.Format(dateLayout)
	c.props[mergedProperty] = joinIDs(ids)
	s.touchLocked(c)
	s.goneLocked(p, c)
	s.goneLocked(o, c)
	return c, nil
}

// goneLocked takes a merged-away contact out of search and the lists; its
// id now points to into.
func (s *Server) goneLocked(c, into *contact) {
	c.mergedInto = into.id
	now := s.nowLocked()
	if s.opts.ArchiveMerged {
		c.archived, c.archivedAt = true, now
	}
	s.addVersionLocked(c, now, now)
}

// resolveLocked follows merges from c to the contact its id points to.
func (s *Server) resolveLocked(c *contact) *contact {
	for c != nil && c.mergedInto != 0 {
		c = s.contacts[c.mergedInto]
	}
	return c
}

// mergedIDs are the ids merged into the result of merging p and o: both
// ids and the ids merged into either before, ascending.
func mergedIDs(p, o *contact) []int64 {
	var ids []int64
	for _, c := range []*contact{p, o} {
		ids = append(ids, c.id)
		for _, v := range strings.Split(c.props[mergedProperty], ";") {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				ids = append(ids, n)
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, n := range ids {
		parts[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(parts, ";")
}

type mergeRequest struct {
	PrimaryObjectID string `json:"primaryObjectId"`
	ObjectIDToMerge string `json:"objectIdToMerge"`
}

// mergeEndpointLocked answers POST /crm/v3/objects/contacts/merge: 200
// with the merged contact (its default properties), 400 for a bad body
// or a contact merged with itself, 404 for an id of no live contact.
func (s *Server) mergeEndpointLocked(body []byte) answer {
	var req mergeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return s.validationLocked("Invalid input JSON: " + err.Error())
	}
	if req.PrimaryObjectID == "" || req.ObjectIDToMerge == "" {
		return s.validationLocked("primaryObjectId and objectIdToMerge are required")
	}
	c, err := s.mergeLocked(req.PrimaryObjectID, req.ObjectIDToMerge)
	if err != nil {
		m := err.(*errMerge)
		if m.status == http.StatusNotFound {
			return s.errorLocked(http.StatusNotFound, "OBJECT_NOT_FOUND", m.message)
		}
		return s.validationLocked(m.message)
	}
	return jsonAnswer(http.StatusOK, s.renderContact(c, nil))
}

// getLocked answers GET /crm/v3/objects/contacts/{id}: the live contact,
// or the one a merged-away id points to (with its own, new id); 404 for
// archived contacts (unless archived=true) and unknown ids.
func (s *Server) getLocked(r *http.Request) answer {
	id := strings.TrimPrefix(strings.TrimSuffix(r.URL.Path, "/"), listPath+"/")
	archived := r.URL.Query().Get("archived") == "true"
	n, err := strconv.ParseInt(id, 10, 64)
	c := s.resolveLocked(s.contacts[n])
	if err != nil || c == nil || c.archived != archived {
		return s.errorLocked(http.StatusNotFound, "OBJECT_NOT_FOUND", fmt.Sprintf("resource not found: contact %s", id))
	}
	return jsonAnswer(http.StatusOK, s.renderContact(c, queryList(r.URL.Query()["properties"])))
}
