package hubspot

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
)

// fixture is a test server and a connector opened on it, whose logs
// (at debug level) go to logs and whose sleeps are recorded, not slept.
type fixture struct {
	srv    *hubspotemu.Server
	src    *Source
	logs   *bytes.Buffer
	mu     sync.Mutex
	sleeps []time.Duration
}

// newFixture starts a server with opts and opens a connector on it with
// fast limits; edit adjusts the settings before opening.
func newFixture(t *testing.T, opts hubspotemu.Options, edit func(*Settings)) *fixture {
	t.Helper()
	if opts.SearchPerSecond == 0 {
		opts.SearchPerSecond = -1
	}
	srv := hubspotemu.NewServer(opts)
	t.Cleanup(srv.Close)
	f := &fixture{srv: srv, logs: &bytes.Buffer{}}
	set := NewSettings()
	set.Token = Secret(srv.Token())
	set.BaseURL = srv.URL
	set.RateLimit = 100000
	set.SearchRateLimit = 100000
	set.Lookback = 0
	if edit != nil {
		edit(set)
	}
	logger := logrus.New()
	logger.SetOutput(&lockedWriter{w: f.logs, mu: &f.mu})
	logger.SetLevel(logrus.DebugLevel)
	src, err := Open(context.Background(), connector.Options{
		Name: "crm", Settings: set, Log: logrus.NewEntry(logger),
		Fields: []string{"email", "firstname", "lastname", "phone"},
	})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = src.Close() })
	src.now = srv.Now
	src.c.sleep = func(ctx context.Context, d time.Duration) error {
		f.mu.Lock()
		f.sleeps = append(f.sleeps, d)
		f.mu.Unlock()
		return ctx.Err()
	}
	f.src = src
	return f
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (f *fixture) recordedSleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// read is the outcome of one Changes call.
type read struct {
	batches    []connector.Batch
	records    []connector.Record
	checkpoint string
}

func (r read) ids() []string {
	out := make([]string, 0, len(r.records))
	for _, rec := range r.records {
		out = append(out, rec.ID)
	}
	return out
}

// changes runs Changes from cp and collects what it emits.
func (f *fixture) changes(t *testing.T, cp string) read {
	t.Helper()
	r := read{checkpoint: cp}
	err := f.src.Changes(context.Background(), cp, func(_ context.Context, b connector.Batch) error {
		if b.Checkpoint == "" {
			t.Errorf("batch without checkpoint")
		}
		r.batches = append(r.batches, b)
		r.records = append(r.records, b.Records...)
		r.checkpoint = b.Checkpoint
		return nil
	})
	if err != nil {
		t.Fatalf("changes from %q: %v", cp, err)
	}
	return r
}

// addAt adds contacts at instant at, one per props.
func addAt(srv *hubspotemu.Server, at time.Time, props ...map[string]string) []string {
	srv.SetClock(at)
	ids := make([]string, 0, len(props))
	for _, p := range props {
		ids = append(ids, srv.Add(p))
	}
	return ids
}

// base is an instant the tests' clocks start at.
var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
