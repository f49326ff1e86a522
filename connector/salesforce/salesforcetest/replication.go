package salesforcetest

import (
	"net/http"
	"strings"
	"time"
)

type describeField struct {
	Name              string `json:"name"`
	Label             string `json:"label"`
	Type              string `json:"type"`
	Length            int    `json:"length"`
	Nillable          bool   `json:"nillable"`
	Createable        bool   `json:"createable"`
	Updateable        bool   `json:"updateable"`
	DefaultedOnCreate bool   `json:"defaultedOnCreate"`
	Custom            bool   `json:"custom"`
}

func (s *Server) describeLocked(name string) answer {
	o := s.objects[strings.ToLower(name)]
	if o == nil {
		return errorAnswer(http.StatusNotFound, "NOT_FOUND", "The requested resource does not exist")
	}
	fields := make([]describeField, 0, len(o.order))
	for _, k := range o.order {
		f := o.fields[k]
		fields = append(fields, describeField{Name: f.Name, Label: f.Name, Type: f.Type, Length: f.Length, Nillable: f.Nillable,
			Createable: f.Createable, Updateable: f.Updateable, DefaultedOnCreate: f.Defaulted, Custom: strings.HasSuffix(f.Name, "__c")})
	}
	return answer{Status: http.StatusOK, Body: map[string]any{
		"name": o.name, "label": o.name, "keyPrefix": o.prefix, "custom": false,
		"createable": true, "updateable": true, "deletable": true, "queryable": true, "replicateable": true,
		"fields": fields,
	}}
}

// replicationLocked reads the object and the range of getDeleted and
// getUpdated, or the answer refusing them.
func (s *Server) replicationLocked(name string, r *http.Request) (*object, time.Time, time.Time, *answer) {
	o := s.objects[strings.ToLower(name)]
	if o == nil {
		a := errorAnswer(http.StatusNotFound, "NOT_FOUND", "The requested resource does not exist")
		return nil, time.Time{}, time.Time{}, &a
	}
	start, end, bad := s.replicationRange(r)
	return o, start, end, bad
}

// replicationRange reads start and end of getDeleted and getUpdated.
// Salesforce wants start to precede end by more than one minute, and
// start no more than 30 days back; an end after now is now.
func (s *Server) replicationRange(r *http.Request) (time.Time, time.Time, *answer) {
	q := r.URL.Query()
	start, err1 := time.Parse(time.RFC3339, q.Get("start"))
	end, err2 := time.Parse(time.RFC3339, q.Get("end"))
	bad := func(msg string) (time.Time, time.Time, *answer) {
		a := errorAnswer(http.StatusBadRequest, "INVALID_REPLICATION_DATE", msg)
		return time.Time{}, time.Time{}, &a
	}
	if err1 != nil || err2 != nil {
		return bad("start and end must be dateTimes, e.g. 2026-01-05T09:00:00+00:00")
	}
	start, end = start.UTC(), end.UTC()
	now := s.nowLocked()
	if end.Sub(start) <= time.Minute {
		return bad("startDate must chronologically precede endDate by more than one minute")
	}
	if start.Before(now.Add(-30 * 24 * time.Hour)) {
		return bad("startDate cannot be more than 30 days ago")
	}
	if end.After(now) {
		end = now
	}
	return start, end, nil
}

func (s *Server) deletedLocked(name string, r *http.Request) answer {
	o, start, end, bad := s.replicationLocked(name, r)
	if bad != nil {
		return *bad
	}
	type deleted struct {
		ID          string `json:"id"`
		DeletedDate string `json:"deletedDate"`
	}
	recs := []deleted{}
	for _, d := range o.deleteLog {
		if !d.at.Before(start) && d.at.Before(end) {
			recs = append(recs, deleted{ID: d.id, DeletedDate: d.at.Format(dateTimeLayout)})
		}
	}
	earliest := o.earliest
	if earliest.IsZero() {
		earliest = s.nowLocked().Add(-deleteLogDays * 24 * time.Hour).Truncate(time.Minute)
	}
	return answer{Status: http.StatusOK, Body: map[string]any{
		"deletedRecords":        recs,
		"earliestDateAvailable": earliest.Format(dateTimeLayout),
		"latestDateCovered":     end.Format(dateTimeLayout),
	}}
}

func (s *Server) updatedLocked(name string, r *http.Request) answer {
	o, start, end, bad := s.replicationLocked(name, r)
	if bad != nil {
		return *bad
	}
	ids := []string{}
	for _, rec := range o.sorted() {
		if !rec.deleted && !rec.modstamp.Before(start) && rec.modstamp.Before(end) {
			ids = append(ids, rec.id)
		}
	}
	return answer{Status: http.StatusOK, Body: map[string]any{"ids": ids, "latestDateCovered": end.Format(dateTimeLayout)}}
}
