package salesforceemu

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestTaskFieldsAsDocumented writes Tasks through sObject Collections
// and checks each refusal the Object Reference documents for the fields a
// call log sets, one record at a time, beside an accepted one.
func TestTaskFieldsAsDocumented(t *testing.T) {
	o := newOrg(t, Options{})
	contact := o.Add("Contact", map[string]any{"LastName": "Called"})
	deleted := o.Add("Contact", map[string]any{"LastName": "Gone"})
	if err := o.Delete(deleted); err != nil {
		t.Fatal(err)
	}
	user := o.AddUser("rep@example.com", "Rep", true)
	inactive := o.AddUser("old@example.com", "Old", false)
	good := map[string]any{"attributes": map[string]string{"type": "Task"}, "WhoId": contact, "Subject": "Call from +15551230000",
		"Status": "Completed", "TaskSubtype": "Call", "CallType": "Inbound", "CallDurationInSeconds": 125,
		"ActivityDate": "2026-01-05", "CallObject": "call:AC1:" + contact, "OwnerId": user}
	with := func(k string, v any) map[string]any {
		r := map[string]any{}
		for kk, vv := range good {
			r[kk] = vv
		}
		r[k] = v
		return r
	}
	cases := []struct {
		name   string
		rec    map[string]any
		status int    // of the whole call
		code   string // the record's statusCode, "" when saved
	}{
		{"a call task", good, 200, ""},
		{"a text task", with("TaskSubtype", "Task"), 200, ""},
		{"CallType outside its restricted picklist", with("CallType", "Incoming"), 200, "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST"},
		{"TaskSubtype outside its restricted picklist", with("TaskSubtype", "SMS"), 200, "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST"},
		{"Subject over 255 characters", with("Subject", strings.Repeat("x", 256)), 200, "STRING_TOO_LONG"},
		{"Description over 32,000 characters", with("Description", strings.Repeat("y", 32001)), 200, "STRING_TOO_LONG"},
		{"WhoId of no record", with("WhoId", MakeID("003000000000zzz")), 200, "INVALID_CROSS_REFERENCE_KEY"},
		{"WhoId of a deleted contact", with("WhoId", deleted), 200, "ENTITY_IS_DELETED"},
		{"WhoId of a user", with("WhoId", user), 200, "FIELD_INTEGRITY_EXCEPTION"},
		{"OwnerId of an inactive user", with("OwnerId", inactive), 200, "INACTIVE_OWNER_OR_USER"},
		{"duration not whole", with("CallDurationInSeconds", 1.5), 400, "JSON_PARSER_ERROR"},
		{"ActivityDate with a time", with("ActivityDate", "2026-01-05T10:00:00Z"), 400, "JSON_PARSER_ERROR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, _, body := o.do("POST", "/composite/sobjects", map[string]any{"allOrNone": false, "records": []any{tc.rec}})
			if tc.status != 200 {
				wantError(t, tc.name, st, body, tc.status, tc.code)
				return
			}
			var res []saveResult
			if st != 200 || json.Unmarshal(body, &res) != nil || len(res) != 1 {
				t.Fatalf("%d %s", st, body)
			}
			switch {
			case tc.code == "" && !res[0].Success:
				t.Errorf("refused: %s", body)
			case tc.code != "" && (res[0].Success || res[0].Errors[0].StatusCode != tc.code):
				t.Errorf("answer %s, want %s", body, tc.code)
			}
		})
	}
}

// TestTaskSubtypeIsNotUpdateable updates a Task: TaskSubtype (Create, no
// Update) is refused, the other call fields are replaced, and a query
// answers the duration as a number.
func TestTaskSubtypeIsNotUpdateable(t *testing.T) {
	o := newOrg(t, Options{})
	contact := o.Add("Contact", map[string]any{"LastName": "Called"})
	st, _, body := o.do("POST", "/composite/sobjects", map[string]any{"allOrNone": false, "records": []any{map[string]any{
		"attributes": map[string]string{"type": "Task"}, "WhoId": contact, "TaskSubtype": "Call", "CallDurationInSeconds": 30}}})
	var res []saveResult
	if st != 200 || json.Unmarshal(body, &res) != nil || !res[0].Success {
		t.Fatalf("create: %d %s", st, body)
	}
	id := *res[0].ID
	st, _, body = o.do("PATCH", "/composite/sobjects", map[string]any{"allOrNone": false, "records": []any{map[string]any{
		"attributes": map[string]string{"type": "Task"}, "id": id, "TaskSubtype": "Task"}}})
	if json.Unmarshal(body, &res) != nil || res[0].Success || res[0].Errors[0].StatusCode != "INVALID_FIELD_FOR_INSERT_UPDATE" {
		t.Errorf("update of TaskSubtype: %d %s, want INVALID_FIELD_FOR_INSERT_UPDATE", st, body)
	}
	st, _, body = o.do("PATCH", "/composite/sobjects", map[string]any{"allOrNone": false, "records": []any{map[string]any{
		"attributes": map[string]string{"type": "Task"}, "id": id, "CallDurationInSeconds": 95, "Description": "Summary"}}})
	if json.Unmarshal(body, &res) != nil || !res[0].Success {
		t.Fatalf("update: %d %s", st, body)
	}
	st, body = o.query("SELECT Id, TaskSubtype, CallDurationInSeconds, Description FROM Task WHERE WhoId = '" + contact + "'")
	var page struct {
		Records []map[string]any `json:"records"`
	}
	if st != 200 || json.Unmarshal(body, &page) != nil || len(page.Records) != 1 {
		t.Fatalf("query: %d %s", st, body)
	}
	r := page.Records[0]
	if r["TaskSubtype"] != "Call" || r["CallDurationInSeconds"] != float64(95) || r["Description"] != "Summary" {
		t.Errorf("task %v, want subtype Call, duration the number 95, the new description", r)
	}
}

// TestLostAnswerIsApplied loses a create's answer: the record exists, the
// client saw no answer.
func TestLostAnswerIsApplied(t *testing.T) {
	o := newOrg(t, Options{})
	o.LoseAnswers(RouteCreate, 1)
	b, _ := json.Marshal(map[string]any{"allOrNone": false, "records": []any{map[string]any{"attributes": map[string]string{"type": "Contact"}, "LastName": "X"}}})
	req, _ := http.NewRequest("POST", o.InstanceURL+"/services/data/v62.0/composite/sobjects", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+o.token)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("answered %d, want no answer", res.StatusCode)
	}
	if n := len(o.Records("Contact")); n != 1 {
		t.Errorf("%d contacts, want the 1 created", n)
	}
}
