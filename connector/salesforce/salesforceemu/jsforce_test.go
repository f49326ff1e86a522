//go:build jsforce

package salesforceemu

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/testkit/testenv"
)

// TestJSForceClient runs jsforce against the test org and checks what it
// reads. Run it with
//
//	(cd /some/dir && npm install jsforce@3)
//	SYNCD_JSFORCE_DIR=/some/dir go test -tags jsforce -run TestJSForceClient ./connector/salesforce/salesforceemu/
func TestJSForceClient(t *testing.T) {
	dir := testenv.Require(t, "SYNCD_JSFORCE_DIR", "npm install jsforce@3 in a folder and point it there")
	s := NewServer(Options{RealClock: true, ValidationRules: []ValidationRule{{Name: "NoForbiddenTitle", Object: "Contact",
		Field: "Title", Message: "Title may not be Forbidden", Refuse: func(r map[string]any) bool { return r["Title"] == "Forbidden" }}}})
	t.Cleanup(s.Close)
	for i := range 2500 { // two query batches
		s.Add("Contact", map[string]any{"LastName": fmt.Sprint("L", i)})
	}
	a := s.Add("Contact", map[string]any{"LastName": "Dup"})
	b := s.Add("Contact", map[string]any{"LastName": "Dup"})
	if err := s.Merge(a, b); err != nil {
		t.Fatal(err)
	}
	taskContact := s.Add("Contact", map[string]any{"LastName": "Called"})
	s.AddUser("rep@example.com", "Rep", true)
	time.Sleep(1100 * time.Millisecond)
	script, _ := os.Getwd()
	cmd := exec.Command("node", script+"/testdata/jsforce/check.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+dir+"/node_modules", "SF_LOGIN_URL="+s.LoginURL,
		"SF_CLIENT_ID="+s.ClientID(), "SF_TASK_CONTACT="+taskContact, "SF_CLIENT_SECRET="+s.ClientSecret(), "SF_NOW="+time.Now().Add(2*time.Minute).UTC().Format(time.RFC3339))
	outb, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("node: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	t.Logf("jsforce: %s", outb)
	var out struct {
		InstanceURL          string   `json:"instanceUrl"`
		DescribeFields       int      `json:"describeFields"`
		LastNameNillable     bool     `json:"lastNameNillable"`
		QueryAllPagesRecords int      `json:"queryAllPagesRecords"`
		ScanAllRecords       int      `json:"scanAllRecords"`
		Merged               int      `json:"merged"`
		CreateSuccess        []bool   `json:"createSuccess"`
		CreateError          string   `json:"createError"`
		UpdateSuccess        []bool   `json:"updateSuccess"`
		DestroySuccess       []bool   `json:"destroySuccess"`
		DeletedRecords       int      `json:"deletedRecords"`
		UpdatedIDs           int      `json:"updatedIds"`
		BadQueryError        string   `json:"badQueryError"`
		ShortRangeError      string   `json:"shortRangeError"`
		RuleSuccess          []bool   `json:"ruleSuccess"`
		RuleError            []string `json:"ruleError"`
		TaskSuccess          []bool   `json:"taskSuccess"`
		TaskError            string   `json:"taskError"`
		Task                 []any    `json:"task"`
		LimitInfo            struct {
			APIUsage struct{ Used, Limit int } `json:"apiUsage"`
		} `json:"limitInfo"`
	}
	if err := json.Unmarshal(outb, &out); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"calls go to instance_url", out.InstanceURL == s.InstanceURL},
		{"describe lists the fields, LastName not nillable", out.DescribeFields > 10 && !out.LastNameNillable},
		{"query pages through nextRecordsUrl", out.QueryAllPagesRecords == 2502},
		{"scanAll (queryAll) shows the merged record", out.ScanAllRecords == 2503 && out.Merged == 1},
		{"collections create: one of two refused for LastName", len(out.CreateSuccess) == 2 && out.CreateSuccess[0] && !out.CreateSuccess[1] && out.CreateError == "REQUIRED_FIELD_MISSING"},
		{"collections update and delete", len(out.UpdateSuccess) == 1 && out.UpdateSuccess[0] && len(out.DestroySuccess) == 1 && out.DestroySuccess[0]},
		{"getDeleted lists the merged record (the one destroyed this second is past end)", out.DeletedRecords >= 1},
		{"getUpdated", out.UpdatedIDs > 0},
		{"bad SOQL is an INVALID_FIELD error", out.BadQueryError == "INVALID_FIELD"},
		{"getDeleted over 61 s from a whole minute is INVALID_REPLICATION_DATE", out.ShortRangeError == "INVALID_REPLICATION_DATE"},
		{"a validation rule refuses one record of a collection, naming its message and field",
			len(out.RuleSuccess) == 2 && !out.RuleSuccess[0] && out.RuleSuccess[1] &&
				len(out.RuleError) == 3 && out.RuleError[0] == "FIELD_CUSTOM_VALIDATION_EXCEPTION" && out.RuleError[1] == "Title may not be Forbidden" && out.RuleError[2] == "Title"},
		{"Tasks: a call and a text created, a TaskSubtype outside its restricted picklist refused",
			len(out.TaskSuccess) == 3 && out.TaskSuccess[0] && out.TaskSuccess[1] && !out.TaskSuccess[2] && out.TaskError == "INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST"},
		{"the call's Task read back by CallObject, duration a number, owner and contact set",
			fmt.Sprint(out.Task) == "[1 Call Inbound 125 true true]"},
		{"limit info read from Sforce-Limit-Info", out.LimitInfo.APIUsage.Limit == 100000 && out.LimitInfo.APIUsage.Used > 0},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("jsforce: %s: no", c.what)
		}
	}
}
