package hubspotemu

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

type listAnswer struct {
	Results []object `json:"results"`
	Paging  *paging  `json:"paging,omitempty"`
}

// listLocked answers GET /crm/v3/objects/contacts: live (or, with
// archived=true, archived) contacts by ascending id, at most 100 a page,
// `after` being the id the next page starts at.
func (s *Server) listLocked(r *http.Request, archived bool) answer {
	q := r.URL.Query()
	limit := 10
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			return s.validationLocked(fmt.Sprintf("limit must be between 1 and %d, got %q", maxListLimit, v))
		}
		limit = n
	}
	var after int64
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return s.validationLocked(fmt.Sprintf("Invalid after value %q", v))
		}
		after = n
	}
	names := queryList(q["properties"])
	ans := listAnswer{Results: []object{}}
	for _, c := range s.order {
		if c.id < after || c.archived != archived || (c.mergedInto != 0 && !s.opts.ArchiveMerged) {
			continue
		}
		if len(ans.Results) == limit {
			ans.Paging = newPaging(strconv.FormatInt(c.id, 10))
			break
		}
		ans.Results = append(ans.Results, s.renderContact(c, names))
	}
	return jsonAnswer(http.StatusOK, ans)
}

func (s *Server) renderContact(c *contact, names []string) object {
	o := render(c.props, c.createdAt, c.updatedAt, names)
	if c.archived {
		o.Archived = true
		o.ArchivedAt = c.archivedAt.Format(dateLayout)
	}
	return o
}

// queryList reads a repeated or comma-separated query parameter.
func queryList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

type property struct {
	Name      string `json:"name"`
	Label     string `json:"label"`
	Type      string `json:"type"`
	FieldType string `json:"fieldType"`
	GroupName string `json:"groupName"`
}

func (s *Server) propertiesLocked() answer {
	names := make([]string, 0, len(s.props))
	for n := range s.props {
		names = append(names, n)
	}
	sort.Strings(names)
	out := struct {
		Results []property `json:"results"`
	}{Results: []property{}}
	for _, n := range names {
		typ, field := "string", "text"
		if dateProperties[n] {
			typ, field = "datetime", "date"
		}
		if n == "hs_object_id" {
			typ, field = "number", "number"
		}
		out.Results = append(out.Results, property{Name: n, Label: n, Type: typ, FieldType: field, GroupName: "contactinformation"})
	}
	return jsonAnswer(http.StatusOK, out)
}

// batchInput is one input of a batch endpoint.
type batchInput struct {
	ID                 string                `json:"id"`
	IDProperty         string                `json:"idProperty"`
	ObjectWriteTraceID string                `json:"objectWriteTraceId"`
	Properties         map[string]scalarText `json:"properties"`
}

// scalarText takes a property value sent as a JSON string, number, bool
// or null (which clears the property).
type scalarText string

func (v *scalarText) UnmarshalJSON(b []byte) error {
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	switch t := x.(type) {
	case nil:
		*v = ""
	case string:
		*v = scalarText(t)
	case bool, float64:
		*v = scalarText(strings.TrimSpace(string(b)))
	default:
		return fmt.Errorf("property value %s is not a scalar", b)
	}
	return nil
}

type batchRequest struct {
	Inputs     []batchInput `json:"inputs"`
	Properties []string     `json:"properties"`
	IDProperty string       `json:"idProperty"`
}

type batchAnswer struct {
	Status      string      `json:"status"`
	Results     []object    `json:"results"`
	NumErrors   int         `json:"numErrors,omitempty"`
	Errors      []errorBody `json:"errors,omitempty"`
	StartedAt   string      `json:"startedAt"`
	CompletedAt string      `json:"completedAt"`
}

func (s *Server) decodeBatchLocked(body []byte) (batchRequest, *answer) {
	var req batchRequest
	if err := json.Unmarshal(body, &req); err != nil {
		a := s.validationLocked("Invalid input JSON: " + err.Error())
		return req, &a
	}
	if len(req.Inputs) == 0 {
		a := s.validationLocked("inputs must not be empty")
		return req, &a
	}
	if len(req.Inputs) > maxBatchInputs {
		a := s.validationLocked(fmt.Sprintf("Batch input size %d exceeds the limit of %d inputs.", len(req.Inputs), maxBatchInputs))
		return req, &a
	}
	return req, nil
}

func (s *Server) newBatchAnswer() batchAnswer {
	now := s.nowLocked().Format(dateLayout)
	return batchAnswer{Status: "COMPLETE", Results: []object{}, StartedAt: now, CompletedAt: now}
}

// propertyErrors checks property names: unknown and read-only ones fail.
func (s *Server) propertyErrors(props map[string]scalarText) []errorDetail {
	var out []errorDetail
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch {
		case !s.props[k]:
			out = append(out, errorDetail{Message: fmt.Sprintf("Property %q does not exist", k), Code: "PROPERTY_DOESNT_EXIST", Context: map[string][]string{"propertyName": {k}}})
		case readOnlyProperties[k]:
			out = append(out, errorDetail{Message: fmt.Sprintf("%q is a read only property; its value cannot be set.", k), Code: "READ_ONLY_VALUE", Context: map[string][]string{"propertyName": {k}}})
		}
	}
	return out
}

func plain(props map[string]scalarText) map[string]string {
	out := make(map[string]string, len(props))
	for k, v := range props {
		out[k] = string(v)
	}
	return out
}

// batchCreateLocked creates contacts. Without objectWriteTraceIds the call
// is all or nothing: the first invalid input fails it (400, or 409 for an
// email already in use). With them, HubSpot's multi-status mode: each
// failing input gets an error naming its trace id, the others are
// created, and the answer is 207 when any failed.
func (s *Server) batchCreateLocked(body []byte) answer {
	req, bad := s.decodeBatchLocked(body)
	if bad != nil {
		return *bad
	}
	multi := false
	for _, in := range req.Inputs {
		multi = multi || in.ObjectWriteTraceID != ""
	}
	emails := map[string]bool{}
	failed := make([]*errorBody, len(req.Inputs))
	for i, in := range req.Inputs {
		if errs := s.propertyErrors(in.Properties); len(errs) > 0 {
			failed[i] = &errorBody{Status: "error", Category: "VALIDATION_ERROR", Message: "Property values were not valid: " + errs[0].Message, Errors: errs}
			continue
		}
		e := strings.ToLower(string(in.Properties["email"]))
		if e == "" {
			continue
		}
		if id, ok := s.emails[e]; ok {
			failed[i] = &errorBody{Status: "error", Category: "CONFLICT",
				Message: fmt.Sprintf("Contact already exists. Existing ID: %d", id),
				Context: map[string][]string{"existingId": {strconv.FormatInt(id, 10)}}}
		} else if emails[e] {
			failed[i] = &errorBody{Status: "error", Category: "VALIDATION_ERROR",
				Message: fmt.Sprintf("Duplicate email %s in batch input", e)}
		}
		emails[e] = true
	}
	if !multi {
		for _, f := range failed {
			if f == nil {
				continue
			}
			status := http.StatusBadRequest
			if f.Category == "CONFLICT" {
				status = http.StatusConflict
			}
			f.CorrelationID = s.correlationIDLocked()
			return jsonAnswer(status, *f)
		}
	}
	ans := s.newBatchAnswer()
	for i, in := range req.Inputs {
		if f := failed[i]; f != nil {
			if f.Context == nil {
				f.Context = map[string][]string{}
			}
			f.Context["objectWriteTraceId"] = []string{in.ObjectWriteTraceID}
			ans.Errors = append(ans.Errors, *f)
			continue
		}
		c := s.createLocked(plain(in.Properties))
		ans.Results = append(ans.Results, s.renderContact(c, keys(in.Properties)))
	}
	if !s.opts.KeepBatchOrder {
		s.rng.Shuffle(len(ans.Results), func(i, j int) { ans.Results[i], ans.Results[j] = ans.Results[j], ans.Results[i] })
	}
	ans.NumErrors = len(ans.Errors)
	if ans.NumErrors > 0 {
		return jsonAnswer(http.StatusMultiStatus, ans)
	}
	return jsonAnswer(http.StatusCreated, ans)
}

func keys(m map[string]scalarText) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"hs_object_id"}
	}
	return out
}

// notFoundLocked is HubSpot's error for ids that name no live contact.
func notFound(ids []string) errorBody {
	return errorBody{
		Status: "error", Category: "OBJECT_NOT_FOUND",
		Message: "Could not get some CONTACT objects, they may be deleted or not exist. Check that ids are valid.",
		Context: map[string][]string{"ids": ids},
	}
}

// duplicateIDs returns the ids given more than once.
func duplicateIDs(inputs []batchInput) []string {
	seen := map[string]bool{}
	var dups []string
	for _, in := range inputs {
		if seen[in.ID] {
			dups = append(dups, in.ID)
		}
		seen[in.ID] = true
	}
	return dups
}

// batchUpdateLocked updates contacts by id. Invalid properties or
// duplicate ids fail the whole call (400); ids of missing or archived
// contacts are reported in a 207 OBJECT_NOT_FOUND error while the other
// inputs are applied.
func (s *Server) batchUpdateLocked(body []byte) answer {
	req, bad := s.decodeBatchLocked(body)
	if bad != nil {
		return *bad
	}
	if dups := duplicateIDs(req.Inputs); len(dups) > 0 {
		return s.validationLocked(fmt.Sprintf("Duplicate IDs found in batch input: [%s]. IDs must be unique", strings.Join(dups, ", ")))
	}
	for _, in := range req.Inputs {
		if in.IDProperty != "" {
			return s.validationLocked("hubspotemu: idProperty is not supported")
		}
		if errs := s.propertyErrors(in.Properties); len(errs) > 0 {
			e := errorBody{Status: "error", Category: "VALIDATION_ERROR", Message: "Property values were not valid: " + errs[0].Message,
				Errors: errs, CorrelationID: s.correlationIDLocked()}
			return jsonAnswer(http.StatusBadRequest, e)
		}
	}
	ans := s.newBatchAnswer()
	var missing []string
	for _, in := range req.Inputs {
		c := s.liveLocked(in.ID)
		if c == nil {
			missing = append(missing, in.ID)
			continue
		}
		s.updateLocked(c, plain(in.Properties))
		ans.Results = append(ans.Results, s.renderContact(c, keys(in.Properties)))
	}
	if len(missing) > 0 {
		ans.Errors = []errorBody{notFound(missing)}
		ans.NumErrors = 1
		return jsonAnswer(http.StatusMultiStatus, ans)
	}
	return jsonAnswer(http.StatusOK, ans)
}

// batchReadLocked reads contacts by id (archived ones with archived=true).
// An id merged away reads as the contact it was merged into, with that
// contact's id (HubSpot: "fetching any records using the original IDs will
// return the new merged record with the new ID").
func (s *Server) batchReadLocked(r *http.Request, body []byte) answer {
	req, bad := s.decodeBatchLocked(body)
	if bad != nil {
		return *bad
	}
	if req.IDProperty != "" {
		return s.validationLocked("hubspotemu: idProperty is not supported")
	}
	archived := r.URL.Query().Get("archived") == "true"
	ans := s.newBatchAnswer()
	var missing []string
	for _, in := range req.Inputs {
		n, err := strconv.ParseInt(in.ID, 10, 64)
		c := s.resolveLocked(s.contacts[n])
		if err != nil || c == nil || c.archived != archived {
			missing = append(missing, in.ID)
			continue
		}
		ans.Results = append(ans.Results, s.renderContact(c, req.Properties))
	}
	if len(missing) > 0 {
		ans.Errors = []errorBody{notFound(missing)}
		ans.NumErrors = 1
		return jsonAnswer(http.StatusMultiStatus, ans)
	}
	return jsonAnswer(http.StatusOK, ans)
}

// batchArchiveLocked archives contacts by id and answers 204, also for ids
// that name no live contact (HubSpot's archive is idempotent).
func (s *Server) batchArchiveLocked(body []byte) answer {
	req, bad := s.decodeBatchLocked(body)
	if bad != nil {
		return *bad
	}
	for _, in := range req.Inputs {
		if c := s.liveLocked(in.ID); c != nil {
			s.archiveLocked(c)
		}
	}
	return answer{Status: http.StatusNoContent}
}
