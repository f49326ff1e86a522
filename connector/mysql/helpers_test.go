package mysql_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/connectortest"
	"github.com/syncd-io/syncd/connector/mysql"
	"github.com/syncd-io/syncd/connector/sqlkit"
	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

const batchSize = 4

// variant is one shape of table the contract suite runs on.
type variant struct {
	name      string
	idType    string // column definition of id
	textID    bool   // ids are made by the store
	missingID string
	soft      string // the deleted_at column's type, "" for hard deletes
	view      bool
}

var variants = []variant{
	{name: "auto-increment ids with DATETIME soft delete", idType: "BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY", missingID: "987654321", soft: "DATETIME(6) NULL"},
	{name: "text ids with hard delete", idType: "VARCHAR(40) PRIMARY KEY DEFAULT (uuid())", textID: true, missingID: "no-such-id"},
	{name: "int ids with tinyint(1) soft delete", idType: "INT AUTO_INCREMENT PRIMARY KEY", missingID: "987654", soft: "TINYINT(1) NOT NULL DEFAULT 0"},
	{name: "view with soft delete", idType: "BIGINT AUTO_INCREMENT PRIMARY KEY", missingID: "987654321", soft: "DATETIME(6) NULL", view: true},
}

// tableStore is a contacts table in a test's own database.
type tableStore struct {
	db     *sql.DB
	table  string
	textID bool
	soft   string
	open   func(t *testing.T) connector.Source
}

// openSource opens a mysql source through the registry, as the daemon
// does, and closes it at the test's end.
func openSource(t *testing.T, s *mysql.Settings, fields ...string) *mysql.Source {
	t.Helper()
	src, err := openErr(t, s, fields...)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src.(*mysql.Source)
}

func openErr(t *testing.T, s *mysql.Settings, fields ...string) (connector.Source, error) {
	t.Helper()
	typ, ok := connector.Lookup(mysql.TypeName)
	if !ok {
		t.Fatal("mysql connector not registered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return typ.Open(ctx, connector.Options{Name: "test", Settings: s, Fields: fields})
}

// settings returns settings on dsn for table, with no look-back (an
// exact cursor) unless changed.
func settings(dsn, table string, mod ...func(*mysql.Settings)) *mysql.Settings {
	s := mysql.NewSettings()
	s.DSN = connector.Secret(dsn)
	s.Table = table
	zero := time.Duration(0)
	s.Lookback = &zero
	s.Changes = mysql.ChangesPoll
	for _, m := range mod {
		m(s)
	}
	return s
}

// database gives the test a database of its own and a connection to it.
func database(t *testing.T) (*sql.DB, string) {
	_, dsn := mysqltest.NewDatabase(t)
	return mysqltest.Open(t, dsn), dsn
}

func (v variant) newStore(t *testing.T) connectortest.Store {
	db, dsn := database(t)
	deleted := ""
	if v.soft != "" {
		deleted = ", deleted_at " + v.soft
		if strings.HasPrefix(v.soft, "TINYINT") {
			deleted = ", deleted " + v.soft
		}
	}
	mysqltest.Exec(t, db, `CREATE TABLE contacts (
		id `+v.idType+`,
		name VARCHAR(255), email VARCHAR(255), phone VARCHAR(64),
		updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)`+deleted+`)
		CHARACTER SET utf8mb4`)
	rel := "contacts"
	if v.view {
		mysqltest.Exec(t, db, `CREATE VIEW contacts_v AS SELECT * FROM contacts`)
		rel = "contacts_v"
	}
	s := &tableStore{db: db, table: "contacts", textID: v.textID, soft: v.soft}
	s.open = func(t *testing.T) connector.Source {
		return openSource(t, settings(dsn, rel, func(s *mysql.Settings) {
			s.BatchSize = batchSize
			switch {
			case strings.HasPrefix(v.soft, "TINYINT"):
				s.DeletedAtColumn = "deleted"
			case v.soft != "":
				s.DeletedAtColumn = "deleted_at"
			}
		}))
	}
	return s
}

func (s *tableStore) Open(t *testing.T) connector.Source { return s.open(t) }

// Insert adds the records in one statement: one NOW(6), one updated_at.
func (s *tableStore) Insert(t *testing.T, recs ...map[string]any) []string {
	t.Helper()
	var values []string
	var args []any
	var ids []string
	for _, rec := range recs {
		row := []any{}
		if s.textID {
			var b [8]byte
			_, _ = rand.Read(b[:])
			ids = append(ids, "c-"+hex.EncodeToString(b[:]))
			row = append(row, ids[len(ids)-1])
		}
		for _, f := range connectortest.Fields {
			v, _ := rec[f].(string)
			row = append(row, v)
		}
		values = append(values, "("+strings.TrimSuffix(strings.Repeat("?, ", len(row)), ", ")+")")
		args = append(args, row...)
	}
	cols := "name, email, phone"
	if s.textID {
		cols = "id, " + cols
	}
	q := "INSERT INTO " + s.table + " (" + cols + ") VALUES " + strings.Join(values, ", ")
	if s.textID {
		mysqltest.Exec(t, s.db, q, args...)
		return ids
	}
	rows, err := s.db.Query(q+" RETURNING CAST(id AS CHAR)", args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// Update changes the rows in one statement, moving updated_at as an
// application would (ON UPDATE moves it only when a value changes).
func (s *tableStore) Update(t *testing.T, fields map[string]any, ids ...string) {
	t.Helper()
	sets, args := []string{"updated_at = NOW(6)"}, []any(nil)
	for _, f := range sqlkit.SortedNames(fields) {
		sets, args = append(sets, f+" = ?"), append(args, fields[f])
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	for _, id := range ids {
		args = append(args, id)
	}
	res := mysqltest.Exec(t, s.db, "UPDATE "+s.table+" SET "+strings.Join(sets, ", ")+" WHERE id IN ("+in+")", args...)
	if n, _ := res.RowsAffected(); int(n) != len(ids) {
		t.Fatalf("update touched %d rows, want %d", n, len(ids))
	}
}

func (s *tableStore) Delete(t *testing.T, id string) {
	t.Helper()
	q := "DELETE FROM " + s.table + " WHERE id = ?"
	switch {
	case strings.HasPrefix(s.soft, "TINYINT"):
		q = "UPDATE " + s.table + " SET deleted = 1 WHERE id = ?"
	case s.soft != "":
		q = "UPDATE " + s.table + " SET deleted_at = NOW(6) WHERE id = ?"
	}
	if n, _ := mysqltest.Exec(t, s.db, q, id).RowsAffected(); n != 1 {
		t.Fatalf("delete of %s touched %d rows", id, n)
	}
}
