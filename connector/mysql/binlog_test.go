package mysql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/mysql"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// binlogTable creates a contacts table whose updated_at no UPDATE moves
// (no ON UPDATE) and returns settings streaming it from the binlog. The
// server must run with its binlog on in ROW format (scripts/test
// --prepare-only sets it).
func binlogTable(t *testing.T, mod ...func(*mysql.Settings)) (*sql.DB, *mysql.Settings) {
	t.Helper()
	db, dsn := database(t)
	var format string
	var logBin int
	if err := db.QueryRow("SELECT @@GLOBAL.log_bin, @@GLOBAL.binlog_format").Scan(&logBin, &format); err != nil || logBin == 0 || format != "ROW" {
		t.Fatalf("the test server runs with log_bin=%d binlog_format=%s (%v); run scripts/test --prepare-only to turn the binlog on in ROW format", logBin, format, err)
	}
	mysqltest.Exec(t, db, `CREATE TABLE contacts (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(100), email VARCHAR(100),
		phone VARCHAR(40), score INT UNSIGNED, big BIGINT UNSIGNED, rating FLOAT, price DECIMAL(10,2), active TINYINT(1),
		kind ENUM('Lead','Customer'), tags SET('a','b','c'), born DATE, seen DATETIME(6), note TEXT,
		updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) CHARACTER SET utf8mb4`)
	s := settings(dsn, "contacts", func(s *mysql.Settings) {
		s.Changes = mysql.ChangesBinlog
		s.BatchSize = 500
	})
	for _, m := range mod {
		m(s)
	}
	return db, s
}

type binlogBatches []connector.Batch

func (bs binlogBatches) records() []connector.Record {
	var out []connector.Record
	for _, b := range bs {
		out = append(out, b.Records...)
	}
	return out
}

// binlogPass reads one pass of Changes from checkpoint and returns its
// batches, the checkpoint to go on from and the pass's error.
func binlogPass(t *testing.T, src connector.Source, checkpoint string) (binlogBatches, string, error) {
	t.Helper()
	var got binlogBatches
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := src.Changes(ctx, checkpoint, func(_ context.Context, b connector.Batch) error {
		got = append(got, b)
		if b.Checkpoint != "" {
			checkpoint = b.Checkpoint
		}
		return nil
	})
	return got, checkpoint, err
}

func mustPass(t *testing.T, src connector.Source, checkpoint string) (binlogBatches, string) {
	t.Helper()
	got, cp, err := binlogPass(t, src, checkpoint)
	if err != nil {
		t.Fatalf("Changes(%q): %v", checkpoint, err)
	}
	return got, cp
}

func describeRecs(recs []connector.Record) string {
	var out []string
	for _, r := range recs {
		if r.Deleted {
			out = append(out, r.ID+" deleted")
		} else {
			out = append(out, fmt.Sprintf("%s %v", r.ID, r.Fields["name"]))
		}
	}
	return strings.Join(out, ",")
}

// TestBinlogEveryChangeArrives streams inserts, updates that leave
// updated_at alone, a key change and hard deletes, in commit order, after
// a first pass that read the table in a consistent snapshot; the
// streamed records equal what poll mode reads of the same rows, so that
// syncd's own write-back comes back as an echo (the link's hash).
func TestBinlogEveryChangeArrives(t *testing.T) {
	db, s := binlogTable(t)
	mysqltest.Exec(t, db, `INSERT INTO contacts (name, email) VALUES ('Ada', 'ada@example.com'), ('Bob', NULL)`)
	src := openSource(t, s)
	if src.Mode() != "binlog" || src.NotifyMode() == "" {
		t.Fatalf("mode %q / %q, want binlog", src.Mode(), src.NotifyMode())
	}
	first, cp := mustPass(t, src, "")
	if got := describeRecs(first.records()); got != "1 Ada,2 Bob" {
		t.Fatalf("first pass read %v, want the two rows", got)
	}
	if !strings.Contains(cp, `"gtid":"0-`) {
		t.Fatalf("first pass's checkpoint %s holds no MariaDB GTID", cp)
	}
	steps := []struct {
		name string
		sql  []string
		want string
	}{
		{"insert", []string{`INSERT INTO contacts (name) VALUES ('Cy')`}, "3 Cy"},
		{"update without updated_at", []string{`UPDATE contacts SET name = 'Ada L' WHERE id = 1`}, "1 Ada L"},
		{"hard delete", []string{`DELETE FROM contacts WHERE id = 2`}, "2 deleted"},
		{"key change", []string{`UPDATE contacts SET id = 30 WHERE id = 3`}, "3 deleted,30 Cy"},
		{"commit order", []string{
			`UPDATE contacts SET name = 'x1' WHERE id = 1`,
			`INSERT INTO contacts (id, name) VALUES (40, 'Dee')`,
			`UPDATE contacts SET name = 'x2' WHERE id = 1`,
		}, "40 Dee,1 x2"},
		{"another table's changes are skipped", []string{
			`CREATE TABLE other (id INT PRIMARY KEY, name TEXT)`,
			`INSERT INTO other VALUES (1, 'not ours')`,
		}, ""},
		{"nothing new", nil, ""},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			for _, q := range step.sql {
				mysqltest.Exec(t, db, q)
			}
			var got binlogBatches
			got, cp = mustPass(t, src, cp)
			if d := describeRecs(got.records()); d != step.want {
				t.Errorf("streamed %q, want %q", d, step.want)
			}
		})
	}

	t.Run("records equal the poll reads'", func(t *testing.T) {
		mysqltest.Exec(t, db, `UPDATE contacts SET email = 'a@b.c', phone = '+49 30 1234', score = 4294967295,
			big = 18446744073709551615, rating = 0.1, price = 12.50, active = 1, kind = 'Customer', tags = 'a,c',
			born = '1990-02-03', seen = '2026-01-02 03:04:05.123456', note = 'über 😀' WHERE id = 1`)
		got, next := mustPass(t, src, cp)
		cp = next
		recs := got.records()
		if len(recs) != 1 {
			t.Fatalf("streamed %d records, want 1", len(recs))
		}
		read, err := src.Get(context.Background(), []string{"1"})
		if err != nil || len(read) != 1 {
			t.Fatalf("Get: %v %v", read, err)
		}
		if fmt.Sprintf("%#v", recs[0].Fields) != fmt.Sprintf("%#v", read[0].Fields) {
			t.Errorf("streamed fields %#v\nread fields     %#v", recs[0].Fields, read[0].Fields)
		}
		if !recs[0].UpdatedAt.Equal(read[0].UpdatedAt) {
			t.Errorf("streamed updated_at %v, read %v", recs[0].UpdatedAt, read[0].UpdatedAt)
		}
	})

	t.Run("write-back comes back equal to what Get reads", func(t *testing.T) {
		res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: "40", Fields: map[string]any{"name": "Dee W", "score": int64(7)}}})
		if err != nil || res[0].Err != nil {
			t.Fatalf("write: %v %+v", err, res)
		}
		got, next := mustPass(t, src, cp)
		cp = next
		read, err := src.Get(context.Background(), []string{"40"})
		if err != nil || len(read) != 1 || len(got.records()) != 1 {
			t.Fatalf("Get %v %v; streamed %v", read, err, got.records())
		}
		if fmt.Sprintf("%#v", got.records()[0].Fields) != fmt.Sprintf("%#v", read[0].Fields) {
			t.Errorf("streamed %#v\nread     %#v", got.records()[0].Fields, read[0].Fields)
		}
	})

	t.Run("count", func(t *testing.T) {
		for _, c := range []struct {
			checkpoint string
			want       connector.Total
		}{
			{"", connector.Total{N: 3, Known: true}}, // the first pass reads the table
			{cp, connector.Total{}},                  // what the binlog holds is unknown
		} {
			got, err := src.Count(context.Background(), c.checkpoint, false)
			if err != nil || got != c.want {
				t.Errorf("Count(%q) = %+v, %v; want %+v", c.checkpoint, got, err, c.want)
			}
		}
	})
}

// TestBinlogLargeTransaction: a 10,000-row transaction arrives whole, in
// batches of batchSize, the checkpoint only with the batch that ends it.
func TestBinlogLargeTransaction(t *testing.T) {
	db, s := binlogTable(t)
	src := openSource(t, s)
	_, cp := mustPass(t, src, "")
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) SELECT CONCAT('p', seq) FROM seq_1_to_10000`)
	got, next := mustPass(t, src, cp)
	if n := len(got.records()); n != 10000 {
		t.Fatalf("streamed %d records, want 10000", n)
	}
	for i, b := range got {
		if len(b.Records) > s.BatchSize {
			t.Errorf("batch %d holds %d records, more than batchSize", i, len(b.Records))
		}
		if last := i == len(got)-1; (b.Checkpoint != "") != last {
			t.Errorf("batch %d of %d has checkpoint %q", i, len(got), b.Checkpoint)
		}
	}
	if next == cp {
		t.Error("checkpoint did not move")
	}
}

// TestBinlogTransactionEndStoredOnceRead: rows that went out without a
// checkpoint (their transaction larger than a batch) have the
// transaction's end stored as soon as it is read, not with the next
// table change: a connection broken later reads none of them again.
func TestBinlogTransactionEndStoredOnceRead(t *testing.T) {
	db, s := binlogTable(t, func(s *mysql.Settings) { s.BatchSize = 1 })
	src := openSource(t, s)
	_, cp := mustPass(t, src, "")
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) VALUES ('Ada')`)
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) VALUES ('Bo')`)
	got, _ := mustPass(t, src, cp)
	var seq []string
	for _, b := range got {
		for _, r := range b.Records {
			seq = append(seq, r.ID)
		}
		if b.Checkpoint != "" {
			seq = append(seq, "stored")
		}
	}
	if d := strings.Join(seq, ","); d != "1,stored,2,stored" {
		t.Errorf("delivered %s, want each row's transaction end stored before the next row", d)
	}
}

// TestBinlogChangesWhileStopped: a source opened again goes on from the
// stored checkpoint with what changed meanwhile.
func TestBinlogChangesWhileStopped(t *testing.T) {
	db, s := binlogTable(t)
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) VALUES ('Ada')`)
	src := openSource(t, s)
	_, cp := mustPass(t, src, "")
	_ = src.Close()
	mysqltest.Exec(t, db, `UPDATE contacts SET name = 'Ada B' WHERE id = 1`)
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) VALUES ('Bo')`)
	mysqltest.Exec(t, db, `DELETE FROM contacts WHERE id = 1`)
	again := openSource(t, s)
	got, _ := mustPass(t, again, cp)
	if d := describeRecs(got.records()); d != "2 Bo,1 deleted" {
		t.Errorf("after the restart streamed %q", d)
	}
}

// TestBinlogColumnDropped: a mapped column dropped mid-stream stops the
// pass before the change lacking it, delivering what came before, pass
// after pass, and nothing is deleted; a column added is no trouble.
func TestBinlogColumnDropped(t *testing.T) {
	db, s := binlogTable(t)
	src := openSource(t, s, "name", "phone")
	_, cp := mustPass(t, src, "")
	mysqltest.Exec(t, db, `ALTER TABLE contacts ADD COLUMN extra INT`)
	mysqltest.Exec(t, db, `INSERT INTO contacts (name, phone, extra) VALUES ('Ada', '1', 5)`)
	got, cp := mustPass(t, src, cp)
	if d := describeRecs(got.records()); d != "1 Ada" || got.records()[0].Fields["phone"] != "1" {
		t.Fatalf("after ADD COLUMN streamed %q %v", d, got.records())
	}
	mysqltest.Exec(t, db, `INSERT INTO contacts (name, phone) VALUES ('Bo', '2')`)
	mysqltest.Exec(t, db, `ALTER TABLE contacts DROP COLUMN phone`)
	mysqltest.Exec(t, db, `UPDATE contacts SET name = 'Ada X' WHERE id = 1`)
	for i := range 2 {
		got, next, err := binlogPass(t, src, cp)
		if !errors.Is(err, mysql.ErrColumnGone) || !strings.Contains(err.Error(), "phone") {
			t.Fatalf("pass %d: %v, want the column gone naming phone", i, err)
		}
		if want := []string{"2 Bo", ""}[i]; describeRecs(got.records()) != want {
			t.Errorf("pass %d delivered %q, want %q (the insert before the ALTER, once)", i, describeRecs(got.records()), want)
		}
		for _, r := range got.records() {
			if r.Deleted {
				t.Errorf("pass %d deleted %s", i, r.ID)
			}
		}
		cp = next
	}
}

// TestBinlogTruncateAndPurge: a TRUNCATE of the table and a checkpoint
// whose binlog the server no longer has (a purged file, a GTID position
// no binlog holds) end the pass with connector.ErrResyncNeeded; the
// resync's snapshot is where the stream goes on from.
func TestBinlogTruncateAndPurge(t *testing.T) {
	db, s := binlogTable(t)
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) VALUES ('Ada'), ('Bo')`)
	src := openSource(t, s)
	_, cp := mustPass(t, src, "")
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) VALUES ('Cy')`)
	mysqltest.Exec(t, db, `TRUNCATE TABLE contacts`)
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) VALUES ('Dee')`)
	got, cp2, err := binlogPass(t, src, cp)
	if !errors.Is(err, connector.ErrResyncNeeded) {
		t.Fatalf("pass over TRUNCATE: %v, want a resync", err)
	}
	if d := describeRecs(got.records()); d != "3 Cy" {
		t.Errorf("before the TRUNCATE streamed %q, want the insert before it", d)
	}
	resync(t, src, "1 Dee")
	mysqltest.Exec(t, db, `UPDATE contacts SET name = 'Dee E' WHERE id = 1`)
	got, _ = mustPass(t, src, cp2)
	if d := describeRecs(got.records()); d != "1 Dee E" {
		t.Errorf("after the resync streamed %q, want the update only", d)
	}

	var first string
	if err := db.QueryRow("SHOW BINARY LOGS").Scan(&first, new(any)); err != nil {
		t.Fatal(err)
	}
	base := first[:strings.LastIndexByte(first, '.')]
	for name, purged := range map[string]string{
		"file purged":        fmt.Sprintf(`{"binlog":"%s.000000","pos":4}`, base),
		"GTID not in binlog": `{"binlog":"` + base + `.000000","pos":4,"gtid":"0-1-0,4000000-1-1","flavor":"mariadb"}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := binlogPass(t, src, purged)
			if !errors.Is(err, connector.ErrResyncNeeded) {
				t.Fatalf("pass from %s: %v, want a resync", purged, err)
			}
		})
	}
}

// resync reads a snapshot as a resync does and checks its rows.
func resync(t *testing.T, src connector.Source, want string) {
	t.Helper()
	var got binlogBatches
	if err := src.Snapshot(context.Background(), func(_ context.Context, b connector.Batch) error {
		got = append(got, b)
		return nil
	}); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if d := describeRecs(got.records()); d != want {
		t.Fatalf("resync read %q, want %q", d, want)
	}
}

// TestBinlogConnectionKilled: the server ends the replication connection
// mid-pass (KILL, as a restart would); the pass connects again from the
// position it stored and delivers the rest, with no resync.
func TestBinlogConnectionKilled(t *testing.T) {
	db, s := binlogTable(t, func(s *mysql.Settings) { s.BatchSize = 1 })
	src := openSource(t, s)
	_, cp := mustPass(t, src, "")
	mysqltest.Exec(t, db, `CREATE TABLE other (id INT AUTO_INCREMENT PRIMARY KEY, v INT)`)
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) VALUES ('Ada')`)
	// More transactions than the client buffers, so that the pass reads
	// from the connection after the KILL.
	for i := range 1500 {
		mysqltest.Exec(t, db, `INSERT INTO other (v) VALUES (?)`, i)
	}
	mysqltest.Exec(t, db, `INSERT INTO contacts (name) VALUES ('Bo')`)
	var got []string
	killed := false
	_, before := mysql.ReplicationConn(src)
	err := src.Changes(context.Background(), cp, func(_ context.Context, b connector.Batch) error {
		for _, r := range b.Records {
			got = append(got, r.ID)
		}
		if !killed && len(b.Records) > 0 {
			killed = true
			id, _ := mysql.ReplicationConn(src)
			mysqltest.Exec(t, db, fmt.Sprintf("KILL CONNECTION %d", id))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("pass with its connection killed: %v", err)
	}
	// A batch of one row ends before its transaction does and carries no
	// checkpoint; the transaction's end is stored once read. The KILL
	// lands at some point after row 1 went out (the client may have read
	// well past it): a row is read again only if the connection broke
	// before its transaction's end was read (an overlap, never a gap),
	// and never a row whose end was stored.
	switch d := strings.Join(got, ","); d {
	case "1,2", "1,1,2", "1,2,2":
	default:
		t.Errorf("delivered %v, want 1 then 2, each maybe twice in a row", got)
	}
	if _, opened := mysql.ReplicationConn(src); opened-before != 2 {
		t.Errorf("%d replication connections, want 2 (the pass's and one after the KILL)", opened-before)
	}
}

// TestBinlogAutoFallsBack: changes: auto polls, saying which grant to
// give, for a user without REPLICATION SLAVE and REPLICATION CLIENT;
// changes: binlog refuses to open.
func TestBinlogAutoFallsBack(t *testing.T) {
	db, s := binlogTable(t)
	user := "syncd_nogrant_" + fmt.Sprint(time.Now().UnixNano()%1e9)
	var dbName string
	if err := db.QueryRow("SELECT DATABASE()").Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	mysqltest.Exec(t, db, "CREATE USER '"+user+"'@'%' IDENTIFIED BY 'pw-123'")
	t.Cleanup(func() { _, _ = db.Exec("DROP USER '" + user + "'@'%'") })
	mysqltest.Exec(t, db, "GRANT SELECT, INSERT, UPDATE, DELETE ON `"+dbName+"`.* TO '"+user+"'@'%'")
	host := strings.TrimSuffix(strings.SplitN(s.DSN.Reveal(), "@", 2)[1], "/"+dbName)
	dsn := user + ":pw-123@" + host + "/" + dbName
	auto := settings(dsn, "contacts", func(s *mysql.Settings) { s.Changes = mysql.ChangesAuto })
	src := openSource(t, auto)
	if src.Mode() != "poll" || !strings.Contains(src.ModeNote(), "changes: auto polls: the user lacks REPLICATION SLAVE and REPLICATION CLIENT: GRANT") {
		t.Errorf("mode %q, note %q", src.Mode(), src.ModeNote())
	}
	strict := settings(dsn, "contacts", func(s *mysql.Settings) { s.Changes = mysql.ChangesBinlog })
	if _, err := openErr(t, strict); err == nil || !strings.Contains(err.Error(), "GRANT REPLICATION SLAVE") {
		t.Errorf("changes: binlog without the grant opened: %v", err)
	} else if !errors.Is(err, connector.ErrSchema) {
		t.Errorf("changes: binlog without the grant: %v is not a problem of the settings (connector.ErrSchema)", err)
	}
}
