package reverse

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/reconcile"
)

// This file holds what the tests against the CRM test servers
// (hubspot_test.go, pipedrive_test.go, salesforce_test.go) share.

// twoWayMapping compiles a two-way mapping of workspace fields to a CRM's.
func twoWayMapping(t *testing.T, fields map[string]mapping.FieldSpec) *mapping.Mapper {
	t.Helper()
	m, err := mapping.Compile(mapping.Spec{Fields: fields}, mapping.Both, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// crmSync is a CRM connector synced forward into an env's workspace, with
// an applier writing the workspace's edits back to it.
type crmSync struct {
	// forward runs one forward pass.
	forward func() reconcile.Summary
	applier *Applier
}

// syncCRM syncs src, a source of the registered type typeName, forward
// into e under target's name, source and mapper: the first pass must
// create n contacts. The applier it returns writes back to target.
func (e *env) syncCRM(t *testing.T, typeName string, src connector.Source, target *Target, n int) crmSync {
	t.Helper()
	typ, ok := connector.Lookup(typeName)
	if !ok {
		t.Fatalf("%s type not registered", typeName)
	}
	s := crmSync{forward: func() reconcile.Summary {
		r, err := reconcile.New(reconcile.Options{Connector: target.Name, Source: target.Source, Type: typ, Reader: src, Mapper: target.Mapper,
			Store: reconcile.StoreOf(e.store), Workspace: e.ws, Log: quietLog(), Backoff: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}}
	if sum := s.forward(); sum.Created != n {
		t.Fatalf("forward pass %v, want %d creates", sum, n)
	}
	var err error
	if s.applier, err = New(Options{Store: StoreOf(e.store), Workspace: e.ws, Log: quietLog(), Targets: []*Target{target}}); err != nil {
		t.Fatal(err)
	}
	return s
}
