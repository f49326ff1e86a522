package connectortest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

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

// OpenLive opens a source on a real account with open (the connector's
// Open), named "integration" and reading fields. The returned context
// ends after a minute; both end at the test's cleanup.
func OpenLive[S connector.Source](t *testing.T, open func(context.Context, connector.Options) (S, error), set connector.Settings, fields ...string) (context.Context, S) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	src, err := open(ctx, connector.Options{Name: "integration", Settings: set, Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return ctx, src
}

// WantFields fails the test if src's Fields fail, and for each name of
// want they lack; whose says whose fields they are ("contact
// properties").
func WantFields(ctx context.Context, t *testing.T, src connector.FieldLister, whose string, want ...string) {
	t.Helper()
	names, err := src.Fields(ctx)
	if err != nil {
		t.Fatalf("%s: %v", whose, err)
	}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("%s lack %q", whose, w)
		}
	}
}

// ReadChanges reads src's Changes from checkpoint to the end and returns
// its records in order and the last batch's checkpoint (checkpoint when
// no batch came), failing the test on error.
func ReadChanges(t *testing.T, src connector.Source, checkpoint string) ([]connector.Record, string) {
	t.Helper()
	var recs []connector.Record
	err := src.Changes(context.Background(), checkpoint, func(_ context.Context, b connector.Batch) error {
		recs = append(recs, b.Records...)
		checkpoint = b.Checkpoint
		return nil
	})
	if err != nil {
		t.Fatalf("Changes: %v", err)
	}
	return recs, checkpoint
}
