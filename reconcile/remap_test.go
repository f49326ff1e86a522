package reconcile

import (
	"context"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/progress"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestMappingChangeRereadsIncrementalSource is issue 23's "a field added
// to the mapping of an incremental connector": ten PostgreSQL rows synced,
// then `company` mapped from a column the mapping did not read. Before,
// the next pass read nothing new and the field stayed empty on all ten
// contacts, with no message. Now that pass reads every row once (a
// snapshot), fills the field on all ten, says why in the log and in its
// progress (the page's running-pass line), and the pass after it reads
// only changes again.
func TestMappingChangeRereadsIncrementalSource(t *testing.T) {
	e := newPGEnv(t, 10, emulator.Options{})
	e.run()
	e.assertConverged()

	spec := testSpec()
	spec.Fields["company"] = mapping.FieldSpec{From: "last_name"}
	log, hook := test.NewNullLogger()
	log.SetLevel(logrus.InfoLevel)
	e.spec, e.log = &spec, logrus.NewEntry(log)
	e.progress = progress.New(progress.Options{})
	var reasons []string
	r := e.reconciler()
	r.opts.Reader = &batchHookSource{Source: r.opts.Reader, batch: func() {
		if s, ok := e.progress.Snapshot(); ok {
			reasons = append(reasons, s.String())
		}
	}}

	before := e.emu.Stats()
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatalf("run after the mapping change: %v (%v)", err, sum)
	}
	if _, patches, _ := e.writes(before); patches != 10 || sum.Updated != 10 {
		t.Errorf("after adding a field: %d PATCHes (%v), want the 10 contacts updated", patches, sum)
	}
	filled := 0
	for _, c := range e.emu.Contacts() {
		if c.Source != nil && *c.Source == testSource && deref(c.DefaultFields.Company) != "" {
			filled++
		}
	}
	if filled != 10 {
		t.Errorf("company filled on %d of 10 contacts", filled)
	}
	said := false
	for _, en := range hook.AllEntries() {
		said = said || en.Message == "mapping changed since the last pass; reading every record once more"
	}
	if !said {
		t.Error("the log does not say the mapping changed and every record is read again")
	}
	if len(reasons) == 0 || !strings.HasPrefix(reasons[0], remapReason) {
		t.Errorf("progress during the pass = %q, want it to start with %q", reasons, remapReason)
	}

	hook.Reset()
	before = e.emu.Stats()
	sum = e.run()
	if posts, patches, deletes := e.writes(before); posts+patches+deletes != 0 || sum.Updated+sum.Unchanged != 0 {
		t.Errorf("the pass after the re-read wrote %d/%d/%d and handled %v, want an incremental pass with nothing to read", posts, patches, deletes, sum)
	}
	for _, en := range hook.AllEntries() {
		if en.Message == "mapping changed since the last pass; reading every record once more" {
			t.Error("the pass after the re-read read every record again")
		}
	}
}

// batchHookSource calls batch before each batch it hands on.
type batchHookSource struct {
	connector.Source
	batch func()
}

func (w *batchHookSource) Snapshot(ctx context.Context, fn connector.BatchFunc) error {
	return w.Source.Snapshot(ctx, func(ctx context.Context, b connector.Batch) error {
		w.batch()
		return fn(ctx, b)
	})
}

func (w *batchHookSource) Changes(ctx context.Context, cp string, fn connector.BatchFunc) error {
	return w.Source.Changes(ctx, cp, func(ctx context.Context, b connector.Batch) error {
		w.batch()
		return fn(ctx, b)
	})
}
