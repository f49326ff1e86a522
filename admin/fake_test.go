package admin

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/reconcile"
	"github.com/syncd-io/syncd/state"
)

// fakeDaemon is an in-memory Daemon that records the actions asked of it.
type fakeDaemon struct {
	mu        sync.Mutex
	status    Status
	checks    []Check
	dead      []DeadLetter
	warnings  []FieldWarning
	conflicts []Conflict
	backup    string
	backupErr error // after half the backup is written

	resyncs  []string // connector names ("" for all)
	retried  []uint64
	dropped  []uint64
	resynced chan string
}

func newFake() *fakeDaemon {
	now := time.Now()
	return &fakeDaemon{
		resynced: make(chan string, 10),
		status: Status{
			Version: "v9.9.9", Live: true, StartedAt: now.Add(-time.Hour),
			State: StateInfo{Path: "/var/lib/syncd/syncd.db", SchemaVersion: 3},
			Connectors: []ConnectorStatus{
				{
					Name: "crm", Type: "csv", Source: "custom-crm", Direction: "to-workspace", Schedule: "@every 5m",
					LastRun: &Run{ID: 7, Run: state.Run{Connector: "crm", Kind: "run", StartedAt: now.Add(-3 * time.Minute), FinishedAt: now.Add(-2 * time.Minute),
						Created: 12, Updated: 3, Unchanged: 4980, Failed: 2, APICalls: 17}},
					LastSuccess: now.Add(-2 * time.Minute), Links: 4995, DeadLetters: 2, Conflicts: 1,
					Checkpoints: map[string]string{"": "cursor-1"},
				},
				{
					Name: "hubspot", Type: "hubspot", Source: "custom-hubspot", Direction: "both", Schedule: "*/10 * * * *",
					LastRun: &Run{ID: 8, Run: state.Run{Connector: "hubspot", Kind: "resync", StartedAt: now.Add(-30 * time.Second)}},
					Running: true, Links: 120,
				},
			},
			DeadLetters: 2, Conflicts: 1,
		},
		checks: []Check{{Name: "state", OK: true, Detail: "open, schema 3"}, {Name: "workspace", OK: true, Detail: "last answer 3s ago"}},
		dead: []DeadLetter{
			{ID: 4, DeadLetter: state.DeadLetter{Connector: "crm", Operation: "sync", Key: "row-17", Attempts: 1,
				Reason: `workspace api POST /v1/contacts: 400: phoneNumbers/0/value: <script>alert("x")</script> is not E.164`, UpdatedAt: now.Add(-time.Minute)}},
			{ID: 5, DeadLetter: state.DeadLetter{Connector: "crm", Operation: "map", Key: "row-99", Attempts: 3,
				Reason: "firstName: no value and no fallback", UpdatedAt: now.Add(-2 * time.Minute), NextTry: now.Add(time.Minute)}},
		},
		warnings: []FieldWarning{
			{FieldWarning: state.FieldWarning{Connector: "hubspot", Key: "501", RecordID: "501", Field: "phoneNumbers.mobile", From: "phone", Value: "<b>n/a</b>",
				Reason: `invalid phone number "<b>n/a</b>" read in region US: not a phone number`, CreatedAt: now.Add(-3 * time.Minute)}},
		},
		conflicts: []Conflict{
			{ID: 2, Conflict: state.Conflict{Connector: "hubspot", ExternalID: "501", ContactID: "CT123", Policy: "newest-wins", Winner: "workspace",
				Workspace: map[string]string{"lastName": "Smith-Jones"}, Source: map[string]string{"lastName": "Smith"}, At: now.Add(-5 * time.Minute)}},
		},
		backup: strings.Repeat("bolt", 1000),
	}
}

func (f *fakeDaemon) Resync(ctx context.Context, name string, o reconcile.ResyncOptions) ([]reconcile.Summary, error) {
	f.mu.Lock()
	f.resyncs = append(f.resyncs, name)
	f.mu.Unlock()
	f.resynced <- name
	if name == "missing" {
		return nil, fmt.Errorf("%w %q", ErrUnknownConnector, name)
	}
	if o.Plan != nil {
		o.Plan(reconcile.PlanEntry{Action: "create", ExternalID: "row-1"})
	}
	return []reconcile.Summary{{Connector: name, Kind: "resync", Created: 1}}, nil
}

func (f *fakeDaemon) Status(ctx context.Context) (Status, error) { return f.status, nil }
func (f *fakeDaemon) Ready(ctx context.Context) []Check          { return f.checks }

func (f *fakeDaemon) DeadLetters(connector string) ([]DeadLetter, error) {
	var out []DeadLetter
	for _, d := range f.dead {
		if connector == "" || d.Connector == connector {
			out = append(out, d)
		}
	}
	return out, nil
}

func (f *fakeDaemon) FieldWarnings(connector string) ([]FieldWarning, error) {
	var out []FieldWarning
	for _, w := range f.warnings {
		if connector == "" || w.Connector == connector {
			out = append(out, w)
		}
	}
	return out, nil
}

func (f *fakeDaemon) RetryDeadLetter(ctx context.Context, id uint64) (RetryResponse, error) {
	f.mu.Lock()
	f.retried = append(f.retried, id)
	f.mu.Unlock()
	switch id {
	case 4:
		return RetryResponse{Summary: reconcile.Summary{Connector: "crm", Kind: "retry", Created: 1}, Resolved: true}, nil
	case 5:
		return RetryResponse{}, fmt.Errorf("%w: writeback", ErrNotRetryable)
	}
	return RetryResponse{}, fmt.Errorf("dead letter %d: %w", id, state.ErrNotFound)
}

func (f *fakeDaemon) DropDeadLetter(id uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, d := range f.dead {
		if d.ID == id {
			f.dead = append(f.dead[:i], f.dead[i+1:]...)
			f.dropped = append(f.dropped, id)
			return nil
		}
	}
	return fmt.Errorf("dead letter %d: %w", id, state.ErrNotFound)
}

func (f *fakeDaemon) Conflicts(connector string, limit int) ([]Conflict, error) {
	return f.conflicts, nil
}

func (f *fakeDaemon) Backup(w io.Writer) (int64, error) {
	if f.backupErr != nil {
		n, _ := io.WriteString(w, f.backup[:len(f.backup)/2])
		return int64(n), f.backupErr
	}
	n, err := io.WriteString(w, f.backup)
	return int64(n), err
}
