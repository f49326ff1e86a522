package salesforceemu

import (
	"fmt"
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
func (s *Server) replicationLocked(name string, r *http.Request, maxAge time.Duration) (*object, time.Time, time.Time, *answer) {
	o := s.objects[strings.ToLower(name)]
	if o == nil {
		a := errorAnswer(http.StatusNotFound, "NOT_FOUND", "The requested resource does not exist")
		return nil, time.Time{}, time.Time{}, &a
	}
	start, end, bad := s.replicationRange(r, maxAge)
	return o, start, end, bad
}

// replicationRange reads start and end of getDeleted and getUpdated as
// Salesforce documents them: the seconds of both are ignored (12:30:15
// is 12:30:00); start must precede end by more than one minute; start
// may go back no further than maxAge before the day of the call (30 days
// for getUpdated, 15 for getDeleted).
func (s *Server) replicationRange(r *http.Request, maxAge time.Duration) (time.Time, time.Time, *answer) {
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
	start, end = start.UTC().Truncate(time.Minute), end.UTC().Truncate(time.Minute)
	now := s.nowLocked()
	if end.Sub(start) <= time.Minute {
		return bad(fmt.Sprintf("startDate %s must chronologically precede endDate %s by more than one minute (seconds are ignored)",
			start.Format(dateTimeLayout), end.Format(dateTimeLayout)))
	}
	if oldest := startOfDay(now).Add(-maxAge); start.Before(oldest) {
		return bad(fmt.Sprintf("startDate %s is before %s: results go back no more than %d days before the day of the call",
			start.Format(dateTimeLayout), oldest.Format(dateTimeLayout), int(maxAge.Hours()/24)))
	}
	return start, end, nil
}

// coveredLocked is latestDateCovered for a call ending at end: end, or
// the clock's minute when end is later (what happens after the call
// cannot be covered by it), or the minute a transaction in flight began.
func (s *Server) coveredLocked(end time.Time) time.Time {
	covered := end
	if cur := s.nowLocked().Truncate(time.Minute); covered.After(cur) {
		covered = cur
	}
	if s.holdReplication != nil && s.holdReplication.Before(covered) {
		covered = *s.holdReplication
	}
	return covered
}

func startOfDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// earliestLocked is getDeleted's earliestDateAvailable: the newest
// deletion purged from the delete log, or the start of the oldest day
// the log keeps (15 days before the day of the call).
func (s *Server) earliestLocked(o *object) time.Time {
	earliest := startOfDay(s.nowLocked()).Add(-deleteLogDays * 24 * time.Hour)
	if p := o.earliest.Truncate(time.Minute); p.After(earliest) {
		earliest = p
	}
	return earliest
}

// deletedLocked answers getDeleted. A start before earliestDateAvailable
// (the delete log was purged past it) is refused with
// INVALID_REPLICATION_DATE: the caller must resync.
func (s *Server) deletedLocked(name string, r *http.Request) answer {
	o, start, end, bad := s.replicationLocked(name, r, deleteLogDays*24*time.Hour)
	if bad != nil {
		return *bad
	}
	earliest := s.earliestLocked(o)
	if start.Before(earliest) {
		return errorAnswer(http.StatusBadRequest, "INVALID_REPLICATION_DATE",
			fmt.Sprintf("startDate %s is before earliestDateAvailable %s: deleted records were purged; replicate the whole table again",
				start.Format(dateTimeLayout), earliest.Format(dateTimeLayout)))
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
	covered := s.coveredLocked(end)
	return answer{Status: http.StatusOK, Body: map[string]any{
		"deletedRecords":        recs,
		"earliestDateAvailable": earliest.Format(dateTimeLayout),
		"latestDateCovered":     covered.Format(dateTimeLayout),
	}}
}

func (s *Server) updatedLocked(name string, r *http.Request) answer {
	o, start, end, bad := s.replicationLocked(name, r, updatedDays*24*time.Hour)
	if bad != nil {
		return *bad
	}
	ids := []string{}
	for _, rec := range o.sorted() {
		if !rec.deleted && !rec.modstamp.Before(start) && rec.modstamp.Before(end) {
			ids = append(ids, rec.id)
		}
	}
	covered := s.coveredLocked(end)
	return answer{Status: http.StatusOK, Body: map[string]any{"ids": ids, "latestDateCovered": covered.Format(dateTimeLayout)}}
}
