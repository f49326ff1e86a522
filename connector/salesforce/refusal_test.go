package salesforce

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
)

// TestRefusalsAreRefusedErrors writes changes a validation rule refuses
// inside an sObject Collections answer (on update and on create), and
// changes whose whole call Salesforce refuses with a 400: each refused
// change's error is a *connector.RefusedError naming Salesforce's code,
// message and field (matching connector.ErrRefused), the other changes
// are written, and a call refused as a whole is split until the refusal
// is pinned on the change that caused it.
func TestRefusalsAreRefusedErrors(t *testing.T) {
	phoneRule := salesforceemu.ValidationRule{Name: "PhoneFormat", Object: "Contact", Field: "Phone",
		Message: "Phone must be in international format (+...)", Refuse: func(r map[string]any) bool {
			p, _ := r["Phone"].(string)
			return p != "" && p[0] != '+'
		}}
	type want struct {
		refused       bool
		code, field   string
		reason        string
		fieldInRecord string // the value the record holds afterwards, when written
	}
	cases := []struct {
		name    string
		fail    func(org *salesforceemu.Server)
		changes func(a, b, c string) []connector.Change
		want    []want
		calls   map[salesforceemu.Route]int
	}{
		{
			name: "validation rule on update, inside the collection",
			changes: func(a, b, _ string) []connector.Change {
				return []connector.Change{
					{Op: connector.OpUpdate, ID: a, Fields: map[string]any{"Phone": "030 1234567"}},
					{Op: connector.OpUpdate, ID: b, Fields: map[string]any{"Phone": "+49301234567"}},
				}
			},
			want: []want{
				{refused: true, code: "FIELD_CUSTOM_VALIDATION_EXCEPTION", field: "Phone", reason: phoneRule.Message},
				{fieldInRecord: "+49301234567"},
			},
			calls: map[salesforceemu.Route]int{salesforceemu.RouteUpdate: 1},
		},
		{
			name: "validation rule on create, inside the collection",
			changes: func(_, _, _ string) []connector.Change {
				return []connector.Change{
					{Op: connector.OpCreate, Fields: map[string]any{"LastName": "Local", "Phone": "555-0100"}},
					{Op: connector.OpCreate, Fields: map[string]any{"LastName": "Intl", "Phone": "+15555550100"}},
				}
			},
			want: []want{
				{refused: true, code: "FIELD_CUSTOM_VALIDATION_EXCEPTION", field: "Phone", reason: phoneRule.Message},
				{fieldInRecord: "+15555550100"},
			},
			calls: map[salesforceemu.Route]int{salesforceemu.RouteCreate: 1},
		},
		{
			name: "a one-record update refused as a whole call",
			fail: func(org *salesforceemu.Server) {
				org.Fail(salesforceemu.RouteUpdate, 1, http.StatusBadRequest, "FIELD_CUSTOM_VALIDATION_EXCEPTION", "Title is locked", "Title")
			},
			changes: func(a, _, _ string) []connector.Change {
				return []connector.Change{{Op: connector.OpUpdate, ID: a, Fields: map[string]any{"Title": "CEO"}}}
			},
			want:  []want{{refused: true, code: "FIELD_CUSTOM_VALIDATION_EXCEPTION", field: "Title", reason: "Title is locked"}},
			calls: map[salesforceemu.Route]int{salesforceemu.RouteUpdate: 1},
		},
		{
			name: "a three-record update refused as a whole: split until the first record is refused alone",
			fail: func(org *salesforceemu.Server) {
				org.Fail(salesforceemu.RouteUpdate, 2, http.StatusBadRequest, "JSON_PARSER_ERROR", "Cannot deserialize instance of string")
			},
			changes: func(a, b, c string) []connector.Change {
				return []connector.Change{
					{Op: connector.OpUpdate, ID: a, Fields: map[string]any{"Title": "x"}},
					{Op: connector.OpUpdate, ID: b, Fields: map[string]any{"Title": "CTO"}},
					{Op: connector.OpUpdate, ID: c, Fields: map[string]any{"Title": "CFO"}},
				}
			},
			want: []want{
				{refused: true, code: "JSON_PARSER_ERROR", reason: "Cannot deserialize instance of string"},
				{fieldInRecord: "CTO"},
				{fieldInRecord: "CFO"},
			},
			calls: map[salesforceemu.Route]int{salesforceemu.RouteUpdate: 3},
		},
		{
			name: "a create refused as a whole call created nothing and is refused",
			fail: func(org *salesforceemu.Server) {
				org.Fail(salesforceemu.RouteCreate, 1, http.StatusBadRequest, "INVALID_FIELD", "No such column 'Fax__c' on sobject of type Contact")
			},
			changes: func(_, _, _ string) []connector.Change {
				return []connector.Change{{Op: connector.OpCreate, Fields: map[string]any{"LastName": "New"}}}
			},
			want:  []want{{refused: true, code: "INVALID_FIELD", reason: "No such column 'Fax__c' on sobject of type Contact"}},
			calls: map[salesforceemu.Route]int{salesforceemu.RouteCreate: 1},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			org := salesforceemu.NewServer(salesforceemu.Options{ValidationRules: []salesforceemu.ValidationRule{phoneRule}})
			t.Cleanup(org.Close)
			a := org.Add("Contact", map[string]any{"LastName": "A"})
			b := org.Add("Contact", map[string]any{"LastName": "B"})
			cc := org.Add("Contact", map[string]any{"LastName": "C"})
			s, _ := openOn(t, org, nil, "LastName", "Phone", "Title")
			if _, err := s.describeObject(context.Background()); err != nil {
				t.Fatal(err)
			}
			if c.fail != nil {
				c.fail(org)
			}
			before := org.Stats()
			changes := c.changes(a, b, cc)
			res, err := s.Write(context.Background(), changes)
			if err != nil {
				t.Fatalf("Write: %v, want per-change results", err)
			}
			for i, w := range c.want {
				var re *connector.RefusedError
				if !w.refused {
					if res[i].Err != nil {
						t.Errorf("change %d: %v, want written", i, res[i].Err)
						continue
					}
					rec, _ := org.Get(res[i].ID)
					if v := rec.Fields["Phone"]; changes[i].Fields["Phone"] != nil && v != w.fieldInRecord {
						t.Errorf("change %d: Phone %v, want %s", i, v, w.fieldInRecord)
					}
					if v := rec.Fields["Title"]; changes[i].Fields["Title"] != nil && v != w.fieldInRecord {
						t.Errorf("change %d: Title %v, want %s", i, v, w.fieldInRecord)
					}
					continue
				}
				if !errors.As(res[i].Err, &re) || !errors.Is(res[i].Err, connector.ErrRefused) {
					t.Errorf("change %d: %v, want a *connector.RefusedError", i, res[i].Err)
					continue
				}
				if re.Code != w.code || re.Field != w.field || re.Reason != w.reason {
					t.Errorf("change %d: refused %q field %q reason %q, want %q %q %q", i, re.Code, re.Field, re.Reason, w.code, w.field, w.reason)
				}
				if errors.Is(res[i].Err, connector.ErrOutcomeUnknown) || errors.Is(res[i].Err, connector.ErrNotFound) {
					t.Errorf("change %d: a refusal also matches outcome-unknown or not-found: %v", i, res[i].Err)
				}
			}
			after := org.Stats()
			for route, n := range c.calls {
				if got := after.Requests[route] - before.Requests[route]; got != n {
					t.Errorf("%d calls of %s, want %d", got, route, n)
				}
			}
			if c.name == "a create refused as a whole call created nothing and is refused" && len(org.Records("Contact")) != 3 {
				t.Errorf("%d Contacts, want the 3 of before", len(org.Records("Contact")))
			}
		})
	}
}

// TestRefusalClassification checks which answers are definite refusals
// of the data (a *connector.RefusedError, never sent again as they are),
// which mean the record is gone, and which may pass next time.
func TestRefusalClassification(t *testing.T) {
	records := []struct {
		code              string
		refused, notFound bool
	}{
		{"FIELD_CUSTOM_VALIDATION_EXCEPTION", true, false},
		{"REQUIRED_FIELD_MISSING", true, false},
		{"STRING_TOO_LONG", true, false},
		{"INVALID_EMAIL_ADDRESS", true, false},
		{"DUPLICATES_DETECTED", true, false},
		{"INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST", true, false},
		{"ENTITY_IS_DELETED", false, true},
		{"INVALID_CROSS_REFERENCE_KEY", false, true},
		{"UNABLE_TO_LOCK_ROW", false, false},
		{"UNKNOWN_EXCEPTION", false, false},
		{"ALL_OR_NONE_OPERATION_ROLLED_BACK", false, false},
	}
	for _, r := range records {
		t.Run("record "+r.code, func(t *testing.T) {
			err := (&RecordError{Op: connector.OpUpdate, ID: "003", Code: r.code, Message: "m", Fields: []string{"Phone"}}).result()
			if errors.Is(err, connector.ErrRefused) != r.refused || errors.Is(err, connector.ErrNotFound) != r.notFound {
				t.Errorf("%s: refused %v, not found %v; want %v, %v", r.code, errors.Is(err, connector.ErrRefused), errors.Is(err, connector.ErrNotFound), r.refused, r.notFound)
			}
		})
	}
	calls := []struct {
		name    string
		err     error
		refused bool
	}{
		{"400 with an error code", &Error{Status: 400, Code: "JSON_PARSER_ERROR", Message: "m"}, true},
		{"400 validation rule naming a field", &Error{Status: 400, Code: "FIELD_CUSTOM_VALIDATION_EXCEPTION", Message: "m", Fields: []string{"Phone"}}, true},
		{"400 without Salesforce's error body (a proxy)", &Error{Status: 400, Message: "<html>"}, false},
		{"404 resource not found", &Error{Status: 404, Code: "NOT_FOUND"}, false},
		{"403 daily limit", &Error{Status: 403, Code: "REQUEST_LIMIT_EXCEEDED"}, false},
		{"503 unavailable", &Error{Status: 503, Code: "SERVER_UNAVAILABLE"}, false},
		{"no answer", errors.New("connection reset"), false},
	}
	for _, c := range calls {
		t.Run("call "+c.name, func(t *testing.T) {
			re := callRefusal(c.err)
			if (re != nil) != c.refused {
				t.Fatalf("callRefusal = %v, want refused %v", re, c.refused)
			}
			if re != nil && (!errors.Is(re, connector.ErrRefused) || re.Code == "") {
				t.Errorf("%+v: want a refusal naming the code", re)
			}
		})
	}
}
