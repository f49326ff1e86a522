package salesforceemu

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"
)

// TestGetDeletedRules checks getDeleted (and getUpdated) against the
// rules Salesforce documents (FACTS.md, Deletions): the seconds of start
// and end are ignored, start must precede end by more than one minute,
// latestDateCovered is a whole minute no later than end, results go back
// 15 days (getDeleted) and 30 days (getUpdated) before the day of the
// call, and a start before earliestDateAvailable is refused.
func TestGetDeletedRules(t *testing.T) {
	o := newOrg(t, Options{})
	o.SetClock(time.Date(2026, 1, 20, 9, 0, 0, 0, time.UTC))
	id := o.Add("Contact", map[string]any{"LastName": "Gone"})
	o.Advance(30*time.Second + 250*time.Millisecond)
	if err := o.Delete(id); err != nil { // deleted at 09:00:30.250
		t.Fatal(err)
	}
	o.SetClock(time.Date(2026, 1, 20, 9, 10, 42, 0, time.UTC))
	at := func(h, m, s int) time.Time { return time.Date(2026, 1, 20, h, m, s, 0, time.UTC) }

	type answer struct {
		DeletedRecords []struct {
			ID          string `json:"id"`
			DeletedDate string `json:"deletedDate"`
		} `json:"deletedRecords"`
		EarliestDateAvailable string `json:"earliestDateAvailable"`
		LatestDateCovered     string `json:"latestDateCovered"`
	}
	cases := []struct {
		name        string
		route       string
		start, end  time.Time
		wantStatus  int
		wantDeleted int
		wantCovered string
	}{
		{"a window of minutes lists the deletion", "deleted", at(8, 59, 0), at(9, 5, 0), 200, 1, "2026-01-20T09:05:00.000+0000"},
		{"seconds of start are ignored: 09:00:45 is 09:00, the 09:00:30 deletion is listed", "deleted", at(9, 0, 45), at(9, 5, 0), 200, 1, "2026-01-20T09:05:00.000+0000"},
		{"seconds of end are ignored: 09:05:59 covers to 09:05", "deleted", at(9, 1, 0), at(9, 5, 59), 200, 0, "2026-01-20T09:05:00.000+0000"},
		{"119 s apart on full times is one minute apart: refused", "deleted", at(9, 2, 0), at(9, 3, 59), 400, 0, ""},
		{"61 s apart is one minute: refused", "deleted", at(9, 2, 0), at(9, 3, 1), 400, 0, ""},
		{"61 s apart across two minute boundaries is two minutes: accepted", "deleted", at(9, 2, 59), at(9, 4, 0), 200, 0, "2026-01-20T09:04:00.000+0000"},
		{"exactly one minute: refused", "deleted", at(9, 2, 0), at(9, 3, 0), 400, 0, ""},
		{"two whole minutes: accepted", "deleted", at(9, 2, 0), at(9, 4, 0), 200, 0, "2026-01-20T09:04:00.000+0000"},
		{"end before start: refused", "deleted", at(9, 5, 0), at(9, 2, 0), 400, 0, ""},
		{"an end after the clock covers up to the clock's minute", "deleted", at(9, 0, 0), at(9, 30, 0), 200, 1, "2026-01-20T09:10:00.000+0000"},
		{"getDeleted goes back to the start of the day 15 days before", "deleted", time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), at(9, 5, 0), 200, 1, "2026-01-20T09:05:00.000+0000"},
		{"getDeleted refuses a start 16 days before the day", "deleted", time.Date(2026, 1, 4, 23, 59, 0, 0, time.UTC), at(9, 5, 0), 400, 0, ""},
		{"getUpdated goes back 30 days", "updated", time.Date(2025, 12, 21, 0, 0, 0, 0, time.UTC), at(9, 5, 0), 200, 0, "2026-01-20T09:05:00.000+0000"},
		{"getUpdated refuses 31 days", "updated", time.Date(2025, 12, 20, 23, 0, 0, 0, time.UTC), at(9, 5, 0), 400, 0, ""},
		{"getUpdated ignores seconds too", "updated", at(9, 2, 30), at(9, 3, 40), 400, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := url.Values{"start": {c.start.Format(time.RFC3339)}, "end": {c.end.Format(time.RFC3339)}}
			st, _, b := o.do("GET", "/sobjects/Contact/"+c.route+"/?"+q.Encode(), nil)
			if c.wantStatus != 200 {
				wantError(t, c.name, st, b, c.wantStatus, "INVALID_REPLICATION_DATE")
				return
			}
			var a answer
			if st != 200 || json.Unmarshal(b, &a) != nil {
				t.Fatalf("%d %s", st, b)
			}
			if c.route == "deleted" && (len(a.DeletedRecords) != c.wantDeleted || a.EarliestDateAvailable != "2026-01-05T00:00:00.000+0000") {
				t.Errorf("%s", b)
			}
			if a.LatestDateCovered != c.wantCovered {
				t.Errorf("latestDateCovered %s, want %s", a.LatestDateCovered, c.wantCovered)
			}
			if c.wantDeleted == 1 && a.DeletedRecords[0].DeletedDate != "2026-01-20T09:00:30.250+0000" {
				t.Errorf("deletedDate %s, want the deletion's time with its milliseconds", a.DeletedRecords[0].DeletedDate)
			}
		})
	}

	t.Run("a transaction in flight holds latestDateCovered back", func(t *testing.T) {
		o.HoldReplication(at(9, 3, 20))
		defer o.HoldReplication(time.Time{})
		q := url.Values{"start": {at(9, 0, 0).Format(time.RFC3339)}, "end": {at(9, 8, 0).Format(time.RFC3339)}}
		_, _, b := o.do("GET", "/sobjects/Contact/deleted/?"+q.Encode(), nil)
		var a answer
		if json.Unmarshal(b, &a) != nil || a.LatestDateCovered != "2026-01-20T09:03:00.000+0000" {
			t.Errorf("held: %s, want latestDateCovered 09:03", b)
		}
	})
	t.Run("a start before a purge of the delete log is refused", func(t *testing.T) {
		o.EmptyRecycleBin(at(9, 5, 0), true) // earliestDateAvailable is now the 09:00:30 deletion
		q := url.Values{"start": {at(8, 59, 0).Format(time.RFC3339)}, "end": {at(9, 8, 0).Format(time.RFC3339)}}
		st, _, b := o.do("GET", "/sobjects/Contact/deleted/?"+q.Encode(), nil)
		wantError(t, "start before the purge", st, b, 400, "INVALID_REPLICATION_DATE")
		q.Set("start", at(9, 1, 0).Format(time.RFC3339))
		st, _, b = o.do("GET", "/sobjects/Contact/deleted/?"+q.Encode(), nil)
		var a answer
		if st != 200 || json.Unmarshal(b, &a) != nil || a.EarliestDateAvailable != "2026-01-20T09:00:00.000+0000" {
			t.Errorf("after the purge: %d %s, want earliestDateAvailable 09:00", st, b)
		}
	})
}

// TestValidationRulesInsideACollection saves a collection where a
// validation rule refuses some records, on create and on update: each
// refused record's result has success false, no id, and errors[] with
// statusCode FIELD_CUSTOM_VALIDATION_EXCEPTION, the rule's message and
// fields naming the rule's field (empty for a rule shown at the top of
// the page); the others are saved; a rule of another object does not
// apply.
func TestValidationRulesInsideACollection(t *testing.T) {
	o := newOrg(t, Options{ValidationRules: []ValidationRule{
		{Name: "PhoneFormat", Object: "Contact", Field: "Phone", Message: "Phone must start with +",
			Refuse: func(r map[string]any) bool { p, _ := r["Phone"].(string); return p != "" && p[0] != '+' }},
		{Name: "NoTest", Object: "Contact", Message: "Test records are not allowed",
			Refuse: func(r map[string]any) bool { return r["LastName"] == "Test" }},
		{Name: "LeadTitle", Object: "Lead", Field: "Title", Message: "Lead rule",
			Refuse: func(r map[string]any) bool { return true }},
	}})
	rec := func(f map[string]any) map[string]any {
		f["attributes"] = map[string]string{"type": "Contact"}
		return f
	}
	type result struct {
		ID      *string      `json:"id"`
		Success bool         `json:"success"`
		Errors  []fieldError `json:"errors"`
	}
	send := func(method string, recs ...any) []result {
		t.Helper()
		st, _, b := o.do(method, "/composite/sobjects", map[string]any{"allOrNone": false, "records": recs})
		var res []result
		if st != 200 || json.Unmarshal(b, &res) != nil || len(res) != len(recs) {
			t.Fatalf("%s: %d %s", method, st, b)
		}
		return res
	}
	created := send("POST",
		rec(map[string]any{"LastName": "Ok", "Phone": "+4930123"}),
		rec(map[string]any{"LastName": "Local", "Phone": "030 123"}),
		rec(map[string]any{"LastName": "Test"}),
	)
	check := func(what string, r result, wantMsg string, wantFields []string) {
		t.Helper()
		if r.Success || r.ID != nil || len(r.Errors) != 1 {
			t.Fatalf("%s: %+v, want one error and no id", what, r)
		}
		e := r.Errors[0]
		if e.StatusCode != "FIELD_CUSTOM_VALIDATION_EXCEPTION" || e.Message != wantMsg || len(e.Fields) != len(wantFields) || (len(wantFields) > 0 && e.Fields[0] != wantFields[0]) {
			t.Errorf("%s: %+v, want FIELD_CUSTOM_VALIDATION_EXCEPTION %q fields %v", what, e, wantMsg, wantFields)
		}
	}
	if !created[0].Success || created[0].ID == nil {
		t.Fatalf("valid record: %+v", created[0])
	}
	check("create breaking a field rule", created[1], "Phone must start with +", []string{"Phone"})
	check("create breaking a page rule", created[2], "Test records are not allowed", []string{})
	updated := send("PATCH",
		rec(map[string]any{"id": *created[0].ID, "Phone": "0049 30 1"}),
		rec(map[string]any{"id": *created[0].ID, "Title": "Boss"}),
	)
	check("update breaking a field rule", updated[0], "Phone must start with +", []string{"Phone"})
	if !updated[1].Success {
		t.Errorf("valid update: %+v", updated[1])
	}
	if r, _ := o.Get(*created[0].ID); r.Fields["Phone"] != "+4930123" || r.Fields["Title"] != "Boss" {
		t.Errorf("record after the updates: %v, want the phone kept and the title saved", r.Fields)
	}
}
