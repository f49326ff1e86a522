package connectortest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/syncd-io/syncd/connector"
)

// This file holds what the read-only tests against real accounts
// (build tag integration) share.

// FirstBatch reads src's changes from the start and stops after the first
// batch, which it returns; nil when the account has no records. read
// names the call in a failure ("search", "query").
func FirstBatch(ctx context.Context, t *testing.T, src connector.Source, read string) *connector.Batch {
	t.Helper()
	stop := errors.New("one batch read")
	var first *connector.Batch
	err := src.Changes(ctx, "", func(_ context.Context, b connector.Batch) error {
		first = &b
		return stop
	})
	if err != nil && !errors.Is(err, stop) {
		t.Fatalf("%s: %v", read, err)
	}
	return first
}

// WantNames fails the test for each name of want that names lacks; whose
// says whose names they are ("contact properties").
func WantNames(t *testing.T, whose string, names []string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("%s lack %q", whose, w)
		}
	}
}
