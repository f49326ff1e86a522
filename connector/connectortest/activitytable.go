package connectortest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// ActivityTableDB is a database the activity table suite writes to, on a
// real server. The suite's table has the columns activity_key (unique),
// contact_id, kind, started_at (a timestamp), direction, seconds (an
// integer), summary and transcript (text), body (at most 40 characters)
// and owner_email.
type ActivityTableDB struct {
	// Table is the name of the suite's table, Create makes it (unique
	// says whether activity_key has a unique index).
	Table  string
	Create func(t *testing.T, unique bool)
	// Open opens the connector with the activities table spec.
	Open func(t *testing.T, spec *connector.ActivityTable) connector.ActivityWriter
	// Rows reads the table's rows, column -> text ("" for NULL), ordered
	// by activity_key; started_at as RFC 3339 in UTC, seconds.
	Rows func(t *testing.T) []map[string]string
}

// ActivityMapping is the suite's mapping.
func ActivityMapping(table string) *connector.ActivityTable {
	return &connector.ActivityTable{Table: table, Columns: map[string]string{
		connector.ActivityFieldKey: "activity_key", connector.ActivityFieldContact: "contact_id", connector.ActivityFieldKind: "kind",
		connector.ActivityFieldAt: "started_at", connector.ActivityFieldDirection: "direction", connector.ActivityFieldDuration: "seconds",
		connector.ActivityFieldSummary: "summary", connector.ActivityFieldTranscript: "transcript", connector.ActivityFieldText: "body",
		connector.ActivityFieldOwner: "owner_email",
	}}
}

// ActivityTable runs the suite: rows written and replaced by key, a row
// written before a lost answer found by its key and replaced in place, a
// refused value a *connector.RefusedError without the text, and the
// mapping's problems (an unknown column, a key without a unique index)
// named with their setting.
func ActivityTable(t *testing.T, db ActivityTableDB) {
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 23, 30, 10, 0, time.UTC)
	call := connector.Activity{Key: "call:AC1:7", Kind: connector.ActivityCall, RecordID: "7", SourceID: "AC1",
		Direction: connector.DirectionIncoming, At: at, From: "+15551230000", Status: "completed", Duration: 125 * time.Second,
		OwnerEmail: "rep@example.com"}
	text := connector.Activity{Key: "message:M1:7", Kind: connector.ActivityMessage, RecordID: "7", Direction: connector.DirectionOutgoing,
		At: at.Add(time.Minute), To: "+15551230000", Text: "See you at 5"}

	t.Run("write, lose the answer, find by key, replace", func(t *testing.T) {
		db.Create(t, true)
		w := db.Open(t, ActivityMapping(db.Table))
		if id, err := w.FindActivity(ctx, call.Kind, call.Key, call.RecordID); err != nil || id != "" {
			t.Fatalf("find before: %q, %v", id, err)
		}
		for _, a := range []connector.Activity{call, text} {
			if _, err := w.WriteActivity(ctx, "", a); err != nil {
				t.Fatal(err)
			}
		}
		// The answer of the call's write was lost: a new process finds
		// the row by its key and replaces it with the later summary.
		w2 := db.Open(t, ActivityMapping(db.Table))
		id, err := w2.FindActivity(ctx, call.Kind, call.Key, call.RecordID)
		if err != nil || id == "" {
			t.Fatalf("find after: %q, %v", id, err)
		}
		later := call
		later.Summary, later.NextSteps = []string{"Wants a quote"}, []string{"Send it"}
		later.Transcript = []connector.TranscriptLine{{Speaker: "+15551230000", Start: 3 * time.Second, Content: "Hi"}}
		if got, err := w2.WriteActivity(ctx, id, later); err != nil || got != id {
			t.Fatalf("replace: %q, %v", got, err)
		}
		if _, err := w2.WriteActivity(ctx, "", later); err != nil { // a replay that did not find it
			t.Fatal(err)
		}
		rows := db.Rows(t)
		want := []map[string]string{
			{"activity_key": "call:AC1:7", "contact_id": "7", "kind": "call", "started_at": "2026-03-02T23:30:10Z", "direction": "incoming",
				"seconds": "125", "summary": "Summary:\n- Wants a quote\n\nNext steps:\n- Send it", "transcript": "[00:03] +15551230000: Hi",
				"body": "", "owner_email": "rep@example.com"},
			{"activity_key": "message:M1:7", "contact_id": "7", "kind": "message", "started_at": "2026-03-02T23:31:10Z", "direction": "outgoing",
				"seconds": "", "summary": "", "transcript": "", "body": "See you at 5", "owner_email": ""},
		}
		if len(rows) != len(want) {
			t.Fatalf("%d rows, want %d: %v", len(rows), len(want), rows)
		}
		for i, w := range want {
			for k, v := range w {
				if rows[i][k] != v {
					t.Errorf("row %d %s = %q, want %q", i, k, rows[i][k], v)
				}
			}
		}
	})

	t.Run("a refused value names no text", func(t *testing.T) {
		db.Create(t, true)
		w := db.Open(t, ActivityMapping(db.Table))
		long := text
		long.Key, long.Text = "message:M2:7", "my door code is 4711 and the alarm is off until 9"
		_, err := w.WriteActivity(ctx, "", long)
		var re *connector.RefusedError
		if !errors.As(err, &re) || strings.Contains(err.Error(), "4711") || strings.Contains(re.Reason, "4711") {
			t.Errorf("a body over the column's length: %v, want a RefusedError without the text", err)
		}
	})

	t.Run("mapping problems name the setting", func(t *testing.T) {
		db.Create(t, false)
		spec := ActivityMapping(db.Table)
		spec.Columns[connector.ActivityFieldStatus] = "call_status"
		w := db.Open(t, spec)
		_, err := w.WriteActivity(ctx, "", call)
		for _, want := range []string{`activities.mapping.status: column "call_status" not in`, `activities.mapping.key: column "activity_key"`, "unique"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("write with a bad mapping: %v, want it to say %q", err, want)
			}
		}
		missing := ActivityMapping(db.Table + "_missing")
		if _, err := db.Open(t, missing).FindActivity(ctx, call.Kind, call.Key, "7"); err == nil || !strings.Contains(err.Error(), "activities.table") {
			t.Errorf("find in a table that does not exist: %v", err)
		}
	})
}
