package hubspot

import (
	"errors"
	"testing"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

// TestWriteErrorsFollowTheContract: HubSpot's definite refusals are
// *connector.RefusedError naming the property; a create whose call failed
// after it may have been applied is connector.ErrOutcomeUnknown; a
// missing contact stays ErrNotFound and is no refusal.
func TestWriteErrorsFollowTheContract(t *testing.T) {
	f := newFixture(t, hubspotemu.Options{Seed: 27}, nil)
	ids := addAt(f.srv, base, make([]map[string]string, 2)...)
	res := f.write(t, []connector.Change{
		{Op: connector.OpUpdate, ID: ids[0], Fields: map[string]any{"no_such_property": "x"}},
		{Op: connector.OpUpdate, ID: ids[1], Fields: map[string]any{"firstname": "ok"}},
		{Op: connector.OpUpdate, ID: "999999999", Fields: map[string]any{"firstname": "gone"}},
	})
	var re *connector.RefusedError
	if !errors.As(res[0].Err, &re) || re.Field != "no_such_property" || re.Code != "VALIDATION_ERROR" || re.Reason == "" {
		t.Errorf("unknown property: %v (%+v), want a refusal naming it", res[0].Err, re)
	}
	var he *Error
	if !errors.As(res[0].Err, &he) || he.StatusCode != 400 {
		t.Errorf("the refusal hides HubSpot's error: %v", res[0].Err)
	}
	if res[1].Err != nil {
		t.Errorf("valid update: %v", res[1].Err)
	}
	if !errors.Is(res[2].Err, connector.ErrNotFound) {
		t.Errorf("missing contact: %v, want ErrNotFound", res[2].Err)
	}

	f.srv.Inject(hubspotemu.RouteBatchCreate, hubspotemu.Fault{Status: 502, AfterApply: true})
	res = f.write(t, []connector.Change{{Op: connector.OpCreate, Fields: map[string]any{"email": "x@example.com"}}})
	if !errors.Is(res[0].Err, connector.ErrOutcomeUnknown) || errors.Is(res[0].Err, connector.ErrRefused) {
		t.Errorf("create after a 502: %v, want connector.ErrOutcomeUnknown", res[0].Err)
	}
}
