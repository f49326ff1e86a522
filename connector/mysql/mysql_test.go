package mysql_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/mysql"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// TestValuesOfEachType reads one row of every type the connector maps
// and checks the Go value and its zone: TIMESTAMP in UTC whatever the
// server's zone, DATETIME in the timeZone setting, tinyint(1) as bool,
// unsigned BIGINT beyond int64 as exact text.
func TestValuesOfEachType(t *testing.T) {
	db, dsn := database(t)
	mysqltest.Exec(t, db, `CREATE TABLE people (
		id BIGINT UNSIGNED PRIMARY KEY,
		active TINYINT(1), small TINYINT, score DOUBLE, amount DECIMAL(10,2),
		born DATE, seen DATETIME(6), stamp TIMESTAMP(6) NULL, note TEXT,
		updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`)
	mysqltest.Exec(t, db, `SET time_zone = '+05:00'`)
	mysqltest.Exec(t, db, `INSERT INTO people (id, active, small, score, amount, born, seen, stamp, note) VALUES
		(18446744073709551615, 1, -3, 1.5, 12.30, '1990-02-03', '2026-03-29 01:30:00.123456', '2026-01-02 08:00:00.000001', 'Zoë')`)
	berlin, _ := time.LoadLocation("Europe/Berlin")
	src := openSource(t, settings(dsn, "people", func(s *mysql.Settings) { s.TimeZone = "Europe/Berlin" }))
	recs, _ := connectortest.ReadChanges(t, src, "")
	if len(recs) != 1 {
		t.Fatalf("read %d records, want 1", len(recs))
	}
	f := recs[0].Fields
	want := map[string]any{
		"id":     "18446744073709551615",
		"active": true,
		"small":  int64(-3),
		"score":  1.5,
		"amount": "12.30",
		"born":   time.Date(1990, 2, 3, 0, 0, 0, 0, time.UTC),
		"seen":   time.Date(2026, 3, 29, 1, 30, 0, 123456000, berlin),
		// Written at +05:00 by the session above: 03:00:00.000001 UTC.
		"stamp": time.Date(2026, 1, 2, 3, 0, 0, 1000, time.UTC),
		"note":  "Zoë",
	}
	for k, w := range want {
		got := f[k]
		if gt, ok := got.(time.Time); ok {
			if wt := w.(time.Time); !gt.Equal(wt) || gt.Location().String() != wt.Location().String() {
				t.Errorf("%s = %v (%s), want %v (%s)", k, gt, gt.Location(), wt, wt.Location())
			}
			continue
		}
		if got != w {
			t.Errorf("%s = %#v, want %#v", k, got, w)
		}
	}
	if recs[0].ID != "18446744073709551615" {
		t.Errorf("ID = %q", recs[0].ID)
	}
}

// TestZeroDateIsAnInvalidRecord: a zero date in a carried column makes
// that record Invalid, naming the column, while the rows around it read
// normally.
func TestZeroDateIsAnInvalidRecord(t *testing.T) {
	db, dsn := database(t)
	mysqltest.Exec(t, db, `SET SESSION sql_mode = ''`)
	mysqltest.Exec(t, db, `CREATE TABLE people (id INT PRIMARY KEY, name TEXT, born DATE, seen DATETIME,
		updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))`)
	mysqltest.Exec(t, db, `INSERT INTO people (id, name, born, seen) VALUES
		(1, 'Ada', '1815-12-10', '2026-01-01 10:00:00'),
		(2, 'Zero', '0000-00-00', '2026-01-01 10:00:00'),
		(3, 'Part', '2020-00-15', '2026-01-01 10:00:00'),
		(4, 'Grace', '1906-12-09', '0000-00-00 00:00:00'),
		(5, 'Alan', '1912-06-23', NULL)`)
	src := openSource(t, settings(dsn, "people"))
	recs, _ := connectortest.ReadChanges(t, src, "")
	tests := []struct {
		id, invalid string // invalid: words the error must hold, "" for a valid record
	}{
		{"1", ""},
		{"2", "column born: zero date"},
		{"3", "column born: invalid date"},
		{"4", "column seen: zero date"},
		{"5", ""},
	}
	if len(recs) != len(tests) {
		t.Fatalf("read %d records, want %d", len(recs), len(tests))
	}
	for i, tt := range tests {
		r := recs[i]
		if r.ID != tt.id {
			t.Fatalf("record %d has ID %s, want %s", i, r.ID, tt.id)
		}
		switch {
		case tt.invalid == "" && r.Invalid != nil:
			t.Errorf("record %s: Invalid = %v", r.ID, r.Invalid)
		case tt.invalid != "" && (r.Invalid == nil || !strings.Contains(r.Invalid.Error(), tt.invalid)):
			t.Errorf("record %s: Invalid = %v, want it to say %q", r.ID, r.Invalid, tt.invalid)
		case tt.invalid != "" && len(r.Fields) != 1:
			t.Errorf("record %s: invalid record carries %v, want its id only", r.ID, r.Fields)
		}
	}
}

// TestEmojiNamesAndValues reads and writes names with emoji (outside the
// BMP, which utf8mb4 stores) in a column whose own name is not ASCII.
// Identifiers themselves cannot hold characters outside the BMP.
func TestEmojiNamesAndValues(t *testing.T) {
	db, dsn := database(t)
	mysqltest.Exec(t, db, "CREATE TABLE `people_é` (id INT AUTO_INCREMENT PRIMARY KEY, `名前` VARCHAR(50), "+
		"updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)) CHARACTER SET utf8mb4")
	src := openSource(t, settings(dsn, "people_é"))
	res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpCreate, Fields: map[string]any{"名前": "Zoë 👩‍💻"}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("create: %v %v", err, res)
	}
	recs, _ := connectortest.ReadChanges(t, src, "")
	if len(recs) != 1 || recs[0].ID != res[0].ID || recs[0].Fields["名前"] != "Zoë 👩‍💻" {
		t.Fatalf("read %+v, want one record %s with 名前 Zoë 👩‍💻", recs, res[0].ID)
	}
	fields, _ := src.Fields(context.Background())
	if strings.Join(fields, ",") != "id,名前,updated_at" {
		t.Errorf("Fields = %v", fields)
	}
}

// TestCreateReturnsTheNewID checks both ways a create learns its id:
// RETURNING (MariaDB) and LAST_INSERT_ID (MySQL, forced here), and that
// without either a create into a table whose id is not AUTO_INCREMENT is
// refused as an invalid change naming the column.
func TestCreateReturnsTheNewID(t *testing.T) {
	tests := []struct {
		name      string
		idType    string
		returning bool
		fields    map[string]any
		wantErr   error
		wantID    func(string) bool
	}{
		{"returning an auto-increment id", "BIGINT AUTO_INCREMENT PRIMARY KEY", true, map[string]any{"name": "a"}, nil, numeric},
		{"returning a uuid default", "CHAR(36) PRIMARY KEY DEFAULT (uuid())", true, map[string]any{"name": "a"}, nil, func(s string) bool { return len(s) == 36 }},
		{"last insert id", "BIGINT AUTO_INCREMENT PRIMARY KEY", false, map[string]any{"name": "a"}, nil, numeric},
		{"id carried by the change", "VARCHAR(20) PRIMARY KEY", false, map[string]any{"id": "k-1", "name": "a"}, nil, func(s string) bool { return s == "k-1" }},
		{"no way to learn the id", "VARCHAR(20) PRIMARY KEY DEFAULT 'x'", false, map[string]any{"name": "a"}, connector.ErrInvalidChange, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, dsn := database(t)
			mysqltest.Exec(t, db, `CREATE TABLE people (id `+tt.idType+`, name TEXT,
				updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6))`)
			src := openSource(t, settings(dsn, "people"))
			mysql.SetReturning(src, tt.returning)
			res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpCreate, Fields: tt.fields}})
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantErr != nil {
				if !errors.Is(res[0].Err, tt.wantErr) || !strings.Contains(res[0].Err.Error(), "id") {
					t.Fatalf("Err = %v, want %v naming id", res[0].Err, tt.wantErr)
				}
				return
			}
			if res[0].Err != nil || !tt.wantID(res[0].ID) {
				t.Fatalf("create = %q, %v", res[0].ID, res[0].Err)
			}
			var n int
			if err := db.QueryRow(`SELECT COUNT(*) FROM people WHERE id = ?`, res[0].ID).Scan(&n); err != nil || n != 1 {
				t.Fatalf("row %s: %d, %v", res[0].ID, n, err)
			}
		})
	}
}

func numeric(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == "" && s != "0"
}

// TestRefusalsNameTheColumn: data the server refuses for good comes back
// as a RefusedError naming the column and carrying the server's error
// number and message, and the other changes of the call are written.
func TestRefusalsNameTheColumn(t *testing.T) {
	db, dsn := database(t)
	mysqltest.Exec(t, db, `CREATE TABLE people (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(5) NOT NULL,
		email VARCHAR(50) UNIQUE, age INT, born DATE,
		updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`)
	mysqltest.Exec(t, db, `INSERT INTO people (name, email) VALUES ('Ada', 'ada@example.com')`)
	src := openSource(t, settings(dsn, "people"))
	tests := []struct {
		name   string
		fields map[string]any
		field  string
		code   string
	}{
		{"too long", map[string]any{"name": "far too long"}, "name", "1406"},
		{"null into not null", map[string]any{"name": nil}, "name", "1048"},
		{"duplicate", map[string]any{"name": "B", "email": "ada@example.com"}, "email", "1062"},
		{"not a number", map[string]any{"name": "C", "age": "many"}, "age", "1366"},
		{"not a date", map[string]any{"name": "D", "born": "yesterday"}, "born", "1292"},
		{"fine", map[string]any{"name": "E"}, "", ""},
	}
	changes := make([]connector.Change, len(tests))
	for i, tt := range tests {
		changes[i] = connector.Change{Op: connector.OpCreate, Fields: tt.fields}
	}
	res, err := src.Write(context.Background(), changes)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.code == "" {
				if res[i].Err != nil || res[i].ID == "" {
					t.Fatalf("create = %q, %v", res[i].ID, res[i].Err)
				}
				return
			}
			var re *connector.RefusedError
			if !errors.As(res[i].Err, &re) {
				t.Fatalf("Err = %v, want a RefusedError", res[i].Err)
			}
			if re.Field != tt.field || re.Code != tt.code || re.Reason == "" {
				t.Errorf("refusal = field %q code %q reason %q, want field %q code %q", re.Field, re.Code, re.Reason, tt.field, tt.code)
			}
			if d := connector.Dispose(res[i].Err); d != connector.Permanent {
				t.Errorf("Dispose = %v, want permanent", d)
			}
		})
	}
}

// TestDsnNeverInErrors: a wrong password fails Open with an error that
// holds neither the password nor the dsn.
func TestDsnNeverInErrors(t *testing.T) {
	const pw = "s3cret-pässword"
	dsn := "nosuchuser:" + pw + "@tcp(127.0.0.1:3306)/test"
	_, err := openErr(t, settings(dsn, "people"))
	if err == nil {
		t.Fatal("open succeeded with a wrong user")
	}
	if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), dsn) {
		t.Fatalf("error shows the secret: %v", err)
	}
	s := settings(dsn, "people")
	if strings.Contains(s.String(), pw) {
		t.Fatalf("settings show the secret: %s", s)
	}
}

// TestValidateNamesEachProblem checks settings without connecting and
// then against the table: unknown time zone, missing columns, unusable
// types, each naming its setting.
func TestValidateNamesEachProblem(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*mysql.Settings)
		want []string
	}{
		{"bad dsn and zone", func(s *mysql.Settings) { s.DSN = "no-slash"; s.TimeZone = "Mars/Olympus" }, []string{"dsn:", "timeZone:"}},
		{"missing table", func(s *mysql.Settings) { s.DSN = ""; s.Table = "" }, []string{"dsn: required", "table: required"}},
		{"batch size", func(s *mysql.Settings) { s.BatchSize = 0 }, []string{"batchSize:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := settings(mysqltest.DSN(), "people", tt.mod)
			var msgs []string
			for _, e := range s.Validate() {
				msgs = append(msgs, e.Error())
			}
			all := strings.Join(msgs, "\n")
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("Validate = %q, want %q", all, w)
				}
			}
		})
	}

	db, dsn := database(t)
	mysqltest.Exec(t, db, `CREATE TABLE people (id INT PRIMARY KEY, name TEXT, flag BLOB, updated_at TEXT)`)
	open := []struct {
		name string
		mod  func(*mysql.Settings)
		want string
	}{
		{"no such table", func(s *mysql.Settings) { s.Table = "nobody" }, `table: "nobody" not found`},
		{"no such column", func(s *mysql.Settings) { s.UpdatedAtColumn = "changed" }, `updatedAtColumn: no column "changed"`},
		{"cursor not a time", func(s *mysql.Settings) {}, "updatedAtColumn: column updated_at is of type text"},
		{"deleted not a mark", func(s *mysql.Settings) { s.DeletedAtColumn = "name" }, "deletedAtColumn: column name is of type text"},
		{"unlisted column", func(s *mysql.Settings) { s.Columns = []string{"name", "nope"} }, `columns: no column "nope"`},
	}
	for _, tt := range open {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openErr(t, settings(dsn, "people", tt.mod))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("open: %v, want %q", err, tt.want)
			}
		})
	}
}

// TestConditionalDelete: a delete conditioned on the change time read
// before deciding deletes nothing when the row was edited since
// (ErrChanged), and deletes as before when it was not.
func TestConditionalDelete(t *testing.T) {
	for _, tc := range []struct{ name, deleted string }{
		{name: "hard delete"},
		{name: "soft delete", deleted: ", deleted_at DATETIME(6) NULL"},
		{name: "timestamp updated_at, soft delete", deleted: ", deleted_at DATETIME(6) NULL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, dsn := database(t)
			mysqltest.Exec(t, db, `CREATE TABLE c (id INT PRIMARY KEY, name TEXT,
				updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)`+tc.deleted+`)`)
			if strings.HasPrefix(tc.name, "timestamp") {
				mysqltest.Exec(t, db, `ALTER TABLE c MODIFY updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)`)
			}
			mysqltest.Exec(t, db, `INSERT INTO c (id, name) VALUES (1, 'a')`)
			soft := tc.deleted != ""
			src := openSource(t, settings(dsn, "c", func(s *mysql.Settings) {
				if soft {
					s.DeletedAtColumn = "deleted_at"
				}
			}))
			ctx := context.Background()
			read := func() time.Time {
				t.Helper()
				recs, err := src.Get(ctx, []string{"1"})
				if err != nil || len(recs) != 1 {
					t.Fatalf("Get = %v, %v", recs, err)
				}
				return recs[0].UpdatedAt
			}
			del := func(id string, since time.Time) error {
				t.Helper()
				res, err := src.Write(ctx, []connector.Change{{Op: connector.OpDelete, ID: id, Soft: soft, IfUnchangedSince: since}})
				if err != nil {
					t.Fatalf("Write: %v", err)
				}
				return res[0].Err
			}
			before := read()
			mysqltest.Exec(t, db, `UPDATE c SET name = 'table', updated_at = updated_at + INTERVAL 1 MICROSECOND WHERE id = 1`)
			if err := del("1", before); !errors.Is(err, connector.ErrChanged) {
				t.Errorf("delete of a row edited since: %v, want ErrChanged", err)
			}
			if err := del("2", before); !errors.Is(err, connector.ErrNotFound) {
				t.Errorf("conditional delete of a missing row: %v, want ErrNotFound", err)
			}
			if err := del("1", read()); err != nil {
				t.Fatalf("delete of a row unchanged since: %v", err)
			}
			if recs, err := src.Get(ctx, []string{"1"}); err != nil || (len(recs) == 1 && !recs[0].Deleted) {
				t.Fatalf("after the delete Get = %+v, %v; want it gone or marked", recs, err)
			}
			err := del("1", before)
			if soft && err != nil {
				t.Errorf("conditional delete of a row already soft-deleted: %v, want it kept deleted", err)
			}
			if !soft && !errors.Is(err, connector.ErrNotFound) {
				t.Errorf("conditional delete of a row deleted: %v, want ErrNotFound", err)
			}
		})
	}
}
