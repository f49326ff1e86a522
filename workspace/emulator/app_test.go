package emulator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// App's changes are a person's in the app: no key, fault or limit
// applies, they are not counted as API calls, and a refused change's
// error names its status.
func TestApp(t *testing.T) {
	s := newServer(t, emulator.Options{FaultRate: 1, Rate: 1, Burst: 1})
	app := emulator.App{BaseURL: s.URL}
	ctx := context.Background()
	c, err := app.CreateContact(ctx, workspace.ContactCreate{DefaultFields: workspace.DefaultFieldsInput{FirstName: "Ada"}})
	if err != nil || c.ID == "" || c.Source != nil {
		t.Fatalf("create = %+v, %v; want a contact without source", c, err)
	}
	company := "Analytical Engines"
	got, err := app.UpdateContact(ctx, c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{Company: workspace.Some(company)}})
	if err != nil || got.DefaultFields.Company == nil || *got.DefaultFields.Company != company || !got.UpdatedAt.After(c.CreatedAt) {
		t.Fatalf("update = %+v, %v", got, err)
	}
	if err := app.DeleteContact(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	err = app.DeleteContact(ctx, c.ID)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("second delete = %v, want the 404 named", err)
	}
	_, err = app.CreateContact(ctx, workspace.ContactCreate{})
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("create without first name = %v, want the 400 named", err)
	}
	if len(s.Contacts()) != 0 {
		t.Errorf("%d contacts left", len(s.Contacts()))
	}
	if st := s.Stats(); len(st.Requests) != 0 || st.Faults != 0 {
		t.Errorf("app calls counted as API calls: %+v", st)
	}
}
