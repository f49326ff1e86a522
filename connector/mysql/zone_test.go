package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/mysql"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// Zones west and east of UTC, without daylight saving, as the server
// spells them (an offset needs no time zone tables) and as IANA names.
const (
	west = "-07:00" // America/Phoenix
	east = "+09:00" // Asia/Tokyo
)

// appSession is one connection of an application: its session takes the
// server's global zone when it opens, unless it sets its own.
func appSession(t *testing.T, dsn, want string) *sql.Conn {
	t.Helper()
	conn, err := mysqltest.Open(t, dsn).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	var got string
	if err := conn.QueryRowContext(context.Background(), "SELECT @@session.time_zone").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("application session's time_zone = %s, want %s", got, want)
	}
	return conn
}

func appExec(t *testing.T, app *sql.Conn, q string, args ...any) {
	t.Helper()
	if _, err := app.ExecContext(context.Background(), q, args...); err != nil {
		t.Fatalf("application: %s: %v", q, err)
	}
}

// TestNoEditSkippedAcrossZones: whatever the server's global zone (west
// or east of UTC), the application session's zone and the cursor's type,
// syncd's write-back interleaved with the application's edits never makes
// the checkpoint pass over an edit. Each round the application edits a
// row that syncd then writes back (as reverse does: Get, then a
// conditional update), and edits another row after syncd wrote a third;
// the next read must carry both edits. syncd also creates a row each
// round, stamped by the cursor's DEFAULT. Before syncd's writes ran in the
// DATETIME values' zone, its ON UPDATE stamps (in +00:00) lay hours after
// (west) or before (east) the application's, and edits were skipped.
func TestNoEditSkippedAcrossZones(t *testing.T) {
	const datetime = "DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)"
	const timestamp = "TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)"
	oneMinute := mysql.DefaultLookback
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	berlinNow := time.Now().In(berlin).Format("-07:00")
	tests := []struct {
		name     string
		global   string
		appZone  string // the application's own session zone, "" for the global one
		cursor   string
		timeZone string
		lookback time.Duration
	}{
		{name: "west DATETIME, server's zone", global: west, cursor: datetime},
		{name: "east DATETIME, server's zone", global: east, cursor: datetime},
		{name: "west TIMESTAMP, server's zone", global: west, cursor: timestamp},
		{name: "east TIMESTAMP, server's zone", global: east, cursor: timestamp},
		{name: "west DATETIME, server's zone, one minute lookback", global: west, cursor: datetime, lookback: oneMinute},
		{name: "west DATETIME, timeZone America/Phoenix", global: west, cursor: datetime, timeZone: "America/Phoenix"},
		{name: "east DATETIME, timeZone Asia/Tokyo, one minute lookback", global: east, cursor: datetime, timeZone: "Asia/Tokyo", lookback: oneMinute},
		{name: "east TIMESTAMP, timeZone Asia/Tokyo", global: east, cursor: timestamp, timeZone: "Asia/Tokyo"},
		{name: "west server, application session east, timeZone Asia/Tokyo", global: west, appZone: east, cursor: datetime, timeZone: "Asia/Tokyo"},
		// Without the server's time zone tables syncd's session takes
		// Berlin's offset when each connection opens.
		{name: "host zone server, application session at Berlin's offset, timeZone Europe/Berlin", global: "SYSTEM", appZone: berlinNow, cursor: datetime, timeZone: "Europe/Berlin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, dsn := database(t)
			mysqltest.Exec(t, db, `CREATE TABLE contacts (id INT PRIMARY KEY, name VARCHAR(100), phone VARCHAR(40), seen DATETIME(6) NULL, updated_at `+tt.cursor+`)`)
			var app *sql.Conn
			var src *mysql.Source
			mysqltest.WithGlobalTimeZone(t, tt.global, func() {
				app = appSession(t, dsn, tt.global)
				src = openSource(t, settings(dsn, "contacts", func(s *mysql.Settings) {
					s.TimeZone = tt.timeZone
					s.Lookback = &tt.lookback
				}))
			})
			if tt.appZone != "" {
				appExec(t, app, "SET time_zone = ?", tt.appZone)
			}
			appExec(t, app, `INSERT INTO contacts (id, name, phone) VALUES (1, 'Ada', '0'), (2, 'Grace', '0'), (3, 'Alan', '0'), (4, 'Edsger', '0')`)
			_, cp := connectortest.ReadChanges(t, src, "")
			for round, ids := range [][3]string{{"1", "2", "3"}, {"2", "3", "4"}, {"3", "4", "1"}, {"4", "1", "2"}} {
				a, b, c := ids[0], ids[1], ids[2]
				phoneA, phoneC := fmt.Sprintf("a%d", round), fmt.Sprintf("c%d", round)
				appExec(t, app, "UPDATE contacts SET phone = ? WHERE id = ?", phoneA, a)
				writeBack(t, src, a, fmt.Sprintf("ws-a%d", round))
				writeBack(t, src, b, fmt.Sprintf("ws-b%d", round))
				// A contact created in the app: DEFAULT stamps the cursor.
				res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpCreate, Fields: map[string]any{"id": int64(100 + round), "name": "created"}}})
				if err != nil || res[0].Err != nil {
					t.Fatalf("create: %v %v", err, res[0].Err)
				}
				appExec(t, app, "UPDATE contacts SET phone = ? WHERE id = ?", phoneC, c)
				var recs []connector.Record
				recs, cp = connectortest.ReadChanges(t, src, cp)
				got := map[string]connector.Record{}
				for _, r := range recs {
					got[r.ID] = r
				}
				for id, phone := range map[string]string{a: phoneA, c: phoneC} {
					if r, ok := got[id]; !ok || r.Fields["phone"] != phone {
						t.Fatalf("round %d: the application's edit of row %s (phone %s) was not read after checkpoint; read %v, checkpoint now %s",
							round, id, phone, recordPhones(recs), cp)
					}
				}
			}
		})
	}
}

// writeBack writes a workspace edit back as reverse does: it reads the
// row, then updates it on the condition that it has not changed since.
func writeBack(t *testing.T, src *mysql.Source, id, name string) {
	t.Helper()
	ctx := context.Background()
	recs, err := src.Get(ctx, []string{id})
	if err != nil || len(recs) != 1 {
		t.Fatalf("get %s: %v (%d records)", id, err, len(recs))
	}
	res, err := src.Write(ctx, []connector.Change{{Op: connector.OpUpdate, ID: id, Fields: map[string]any{"name": name}, IfUnchangedSince: recs[0].UpdatedAt}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("write back %s: %v %v", id, err, res[0].Err)
	}
}

func recordPhones(recs []connector.Record) string {
	var out []string
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%s:%v", r.ID, r.Fields["phone"]))
	}
	return strings.Join(out, " ")
}

// TestWritesInTheZonedSession: in a write session of the server's zone
// (east of UTC here), a TIMESTAMP is still written as its instant and a
// DATETIME in the zone, by update and by create, and a TIMESTAMP soft
// delete mark is the time of the delete, as the application sees them.
func TestWritesInTheZonedSession(t *testing.T) {
	db, dsn := database(t)
	mysqltest.Exec(t, db, `CREATE TABLE contacts (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(100),
		seen DATETIME(6) NULL, stamp TIMESTAMP(6) NULL, deleted_at TIMESTAMP(6) NULL,
		updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`)
	var app *sql.Conn
	var src *mysql.Source
	mysqltest.WithGlobalTimeZone(t, east, func() {
		app = appSession(t, dsn, east)
		src = openSource(t, settings(dsn, "contacts", func(s *mysql.Settings) { s.DeletedAtColumn = "deleted_at" }))
	})
	ctx := context.Background()
	at := time.Date(2026, 1, 2, 3, 0, 0, 1000, time.UTC)
	res, err := src.Write(ctx, []connector.Change{{Op: connector.OpCreate, Fields: map[string]any{"name": "Ada", "seen": at, "stamp": at}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("create: %v %v", err, res[0].Err)
	}
	created := res[0].ID
	appExec(t, app, "INSERT INTO contacts (id, name) VALUES (100, 'Grace')")
	writeTimes := func(id string) {
		res, err := src.Write(ctx, []connector.Change{{Op: connector.OpUpdate, ID: id, Fields: map[string]any{"seen": at, "stamp": at}}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("update %s: %v %v", id, err, res[0].Err)
		}
	}
	writeTimes("100")
	for _, id := range []string{created, "100"} {
		var seen, stamp, epoch string
		if err := app.QueryRowContext(ctx, "SELECT CAST(seen AS CHAR), CAST(stamp AS CHAR), UNIX_TIMESTAMP(stamp) FROM contacts WHERE id = ?", id).Scan(&seen, &stamp, &epoch); err != nil {
			t.Fatal(err)
		}
		// The application's session is at +09:00: 03:00 UTC is 12:00.
		if want := "2026-01-02 12:00:00.000001"; seen != want || stamp != want {
			t.Errorf("row %s as the application reads it: seen %s, stamp %s, want both %s", id, seen, stamp, want)
		}
		if want := fmt.Sprintf("%d.%06d", at.Unix(), at.Nanosecond()/1000); epoch != want {
			t.Errorf("row %s: stamp is the instant %s, want %s", id, epoch, want)
		}
		recs, err := src.Get(ctx, []string{id})
		if err != nil || len(recs) != 1 {
			t.Fatalf("get %s: %v", id, err)
		}
		for _, f := range []string{"seen", "stamp"} {
			if got, ok := recs[0].Fields[f].(time.Time); !ok || !got.Equal(at) {
				t.Errorf("row %s: %s read back as %v, want %v", id, f, recs[0].Fields[f], at)
			}
		}
	}
	before := time.Now()
	res, err = src.Write(ctx, []connector.Change{{Op: connector.OpDelete, ID: "100", Soft: true}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("soft delete: %v %v", err, res[0].Err)
	}
	var marked float64
	if err := app.QueryRowContext(ctx, "SELECT UNIX_TIMESTAMP(deleted_at) FROM contacts WHERE id = 100").Scan(&marked); err != nil {
		t.Fatal(err)
	}
	if d := time.Duration((marked - float64(before.UnixMicro())/1e6) * float64(time.Second)); d < -time.Minute || d > time.Minute {
		t.Errorf("deleted_at marks %v away from the delete", d)
	}
}

// TestCheckpointAheadOfTheZone: a checkpoint taken from stamps in
// another zone (here +00:00, as syncd's session stamped DATETIME cursors
// before it wrote in the server's zone, seven hours ahead of a server at
// -07:00) is later than the server's clock in the cursor's zone: the read
// goes on from the clock minus lookback, so that the application's edit
// made now is read instead of waiting seven hours behind the checkpoint.
func TestCheckpointAheadOfTheZone(t *testing.T) {
	db, dsn := database(t)
	mysqltest.Exec(t, db, `CREATE TABLE contacts (id INT PRIMARY KEY, name VARCHAR(100),
		updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`)
	var app *sql.Conn
	var src *mysql.Source
	mysqltest.WithGlobalTimeZone(t, west, func() {
		app = appSession(t, dsn, west)
		src = openSource(t, settings(dsn, "contacts", func(s *mysql.Settings) { s.Lookback = nil }))
	})
	appExec(t, app, "INSERT INTO contacts (id, name) VALUES (1, 'Ada'), (2, 'Grace')")
	var utcNow string
	if err := app.QueryRowContext(context.Background(), "SELECT DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%d %H:%i:%s.%f')").Scan(&utcNow); err != nil {
		t.Fatal(err)
	}
	id := "2"
	old := sqlkit.Position{U: utcNow, ID: &id}.String()
	appExec(t, app, "UPDATE contacts SET name = 'Ada Lovelace' WHERE id = 1")
	recs, cp := connectortest.ReadChanges(t, src, old)
	var read bool
	for _, r := range recs {
		read = read || (r.ID == "1" && r.Fields["name"] == "Ada Lovelace")
	}
	if !read {
		t.Fatalf("the application's edit was not read after the checkpoint %s: read %d records, checkpoint now %s", old, len(recs), cp)
	}
	if cp >= old {
		t.Errorf("checkpoint %s did not come back behind the clock (was %s)", cp, old)
	}
}

// TestCheckpointAheadOfTheZoneOnAnIdleTable: while passes read nothing
// (no batch moves a checkpoint found ahead of the clock), each reads on
// from the first pass's bound, so a commit as late as the lookback
// allows, stamped between two passes' bounds, is still read.
func TestCheckpointAheadOfTheZoneOnAnIdleTable(t *testing.T) {
	db, dsn := database(t)
	mysqltest.Exec(t, db, `CREATE TABLE contacts (id INT PRIMARY KEY, name VARCHAR(100),
		updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`)
	var app *sql.Conn
	var src *mysql.Source
	mysqltest.WithGlobalTimeZone(t, west, func() {
		app = appSession(t, dsn, west)
		src = openSource(t, settings(dsn, "contacts", func(s *mysql.Settings) { s.Lookback = nil }))
	})
	appExec(t, app, "INSERT INTO contacts (id, name, updated_at) VALUES (1, 'Ada', NOW(6) - INTERVAL 10 MINUTE), (2, 'Grace', NOW(6) - INTERVAL 10 MINUTE)")
	var utcNow string
	if err := app.QueryRowContext(context.Background(), "SELECT DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%d %H:%i:%s.%f')").Scan(&utcNow); err != nil {
		t.Fatal(err)
	}
	old := sqlkit.Position{U: utcNow}.String()
	if recs, cp := connectortest.ReadChanges(t, src, old); len(recs) != 0 || cp != old {
		t.Fatalf("the first pass read %d records (checkpoint %s), want none", len(recs), cp)
	}
	// Committed now, stamped a lookback ago: after the first pass's
	// bound, before the second's.
	appExec(t, app, "UPDATE contacts SET name = 'Grace Hopper', updated_at = NOW(6) - INTERVAL 60 SECOND WHERE id = 2")
	recs, cp := connectortest.ReadChanges(t, src, old)
	if len(recs) != 1 || recs[0].Fields["name"] != "Grace Hopper" {
		t.Fatalf("the late commit was not read: %d records, checkpoint %s", len(recs), cp)
	}
}

// TestZoneNotes: `syncd validate` notes the zone DATETIME columns are
// taken in and where it comes from, and says when it looks wrong:
// timeZone differs from the server's zone, or the cursor holds times
// ahead of the server's clock in the zone (rows stamped east of it).
func TestZoneNotes(t *testing.T) {
	tests := []struct {
		name     string
		cursor   string
		timeZone string
		ahead    bool // a row is stamped at UTC, seven hours ahead
		want     []string
		not      []string
	}{
		{name: "the server's zone", cursor: "DATETIME(6)",
			want: []string{"DATETIME columns updated_at carry no time zone: read and written as -07:00 (the server's time_zone -07:00)"},
			not:  []string{"differs", "later than"}},
		{name: "timeZone differs", cursor: "DATETIME(6)", timeZone: "Asia/Tokyo",
			want: []string{"read and written as Asia/Tokyo (the timeZone setting)", "timeZone Asia/Tokyo differs from the server's time_zone -07:00"}},
		{name: "timeZone agrees", cursor: "DATETIME(6)", timeZone: "America/Phoenix", not: []string{"differs"},
			want: []string{"read and written as America/Phoenix (the timeZone setting)"}},
		{name: "cursor stamped ahead", cursor: "DATETIME(6)", ahead: true,
			want: []string{"updated_at holds ", "later than the server's clock in -07:00", "set timeZone to the zone the applications write in"}},
		{name: "TIMESTAMP cursor", cursor: "TIMESTAMP(6)", want: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, dsn := database(t)
			mysqltest.Exec(t, db, `CREATE TABLE contacts (id INT PRIMARY KEY, name VARCHAR(100), updated_at `+tt.cursor+` NOT NULL DEFAULT CURRENT_TIMESTAMP(6))`)
			if tt.ahead {
				mysqltest.Exec(t, db, `INSERT INTO contacts (id, name, updated_at) VALUES (1, 'Ada', UTC_TIMESTAMP(6))`)
			}
			var src *mysql.Source
			mysqltest.WithGlobalTimeZone(t, west, func() {
				src = openSource(t, settings(dsn, "contacts", func(s *mysql.Settings) { s.TimeZone = tt.timeZone }))
			})
			note := src.ModeNote()
			for _, w := range tt.want {
				if !strings.Contains(note, w) || (w == "" && note != "") {
					t.Errorf("note %q\nwant it to say %q", note, w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(note, n) {
					t.Errorf("note %q\nsays %q", note, n)
				}
			}
		})
	}
}
