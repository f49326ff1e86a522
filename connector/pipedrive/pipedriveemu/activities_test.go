package pipedriveemu

import (
	"strconv"
	"strings"
	"testing"
)

// TestActivityRefusals: the activity routes refuse what API v2
// documents as invalid, and accept a call logged on a person.
func TestActivityRefusals(t *testing.T) {
	srv := NewServer(Options{})
	t.Cleanup(srv.Close)
	id := srv.Add(Person{Name: "Ada Lovelace"})
	gone := srv.Add(Person{Name: "Gone"})
	if err := srv.Delete(gone); err != nil {
		t.Fatal(err)
	}
	user := srv.AddUser("Rep", "rep@example.com", true)
	tok := srv.Token()
	part := `"participants":[{"person_id":` + id + `,"primary":true}]`
	tests := []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"a call on a person", "POST", "/api/v2/activities", `{"subject":"Call","type":"call","done":true,"duration":"00:03","due_date":"2026-03-02","due_time":"23:30","owner_id":` + itoa(user) + `,` + part + `}`, 200, ""},
		{"person_id is read-only", "POST", "/api/v2/activities", `{"subject":"Call","type":"call","person_id":` + id + `}`, 400, "read-only"},
		{"an unknown type", "POST", "/api/v2/activities", `{"subject":"Text","type":"sms",` + part + `}`, 400, "activity type"},
		{"duration in seconds", "POST", "/api/v2/activities", `{"subject":"Call","type":"call","duration":"125"}`, 400, "HH:MM"},
		{"due_time with seconds", "POST", "/api/v2/activities", `{"subject":"Call","type":"call","due_time":"23:30:10"}`, 400, "HH:MM"},
		{"done as 1 (v1's form)", "POST", "/api/v2/activities", `{"subject":"Call","type":"call","done":1}`, 400, "boolean"},
		{"an owner of no user", "POST", "/api/v2/activities", `{"subject":"Call","type":"call","owner_id":4242}`, 400, "user"},
		{"a deleted participant", "POST", "/api/v2/activities", `{"subject":"Call","type":"call","participants":[{"person_id":` + gone + `,"primary":true}]}`, 400, "not found"},
		{"an unknown key", "POST", "/api/v2/activities", `{"subject":"Call","type":"call","user_id":1}`, 400, "unknown field"},
		{"update of no activity", "PATCH", "/api/v2/activities/999", `{"note":"x"}`, 404, "not found"},
		{"an activity type without icon", "POST", "/v1/activityTypes", `{"name":"SMS"}`, 400, "icon_key"},
		{"an activity type with an unknown icon", "POST", "/v1/activityTypes", `{"name":"SMS","icon_key":"sms"}`, 400, "icon_key"},
		{"users without a term", "GET", "/v1/users/find?search_by_email=1", "", 400, "term"},
		{"activities with an unknown filter", "GET", "/api/v2/activities?user_id=1", "", 400, "unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := do(t, srv, tc.method, tc.path, tok, tc.body)
			msg, _ := body["error"].(string)
			if status != tc.status || !strings.Contains(msg, tc.msg) {
				t.Errorf("%d %v, want %d %q", status, body, tc.status, tc.msg)
			}
		})
	}
	acts := srv.Activities()
	if len(acts) != 1 || itoa(acts[0].PersonID) != id || acts[0].OwnerID != user || !acts[0].Done {
		t.Errorf("activities %+v, want the one call on the person", acts)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
