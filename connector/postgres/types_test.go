package postgres_test

import (
	"math"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// typeCase is one column type, the literal stored and the value every
// reader must give for it.
type typeCase struct {
	name    string
	typ     string // column definition
	literal string // SQL literal stored
	want    any
}

func typeCases() []typeCase {
	at := time.Date(2024, 3, 1, 4, 30, 0, 123456000, time.UTC)
	return []typeCase{
		{"smallint", "smallint", "-32768", int64(-32768)},
		{"integer", "integer", "2147483647", int64(2147483647)},
		{"bigint", "bigint", "9007199254740993", int64(9007199254740993)},
		{"numeric", "numeric(12,4)", "12.34", "12.3400"},
		{"numeric unbounded", "numeric", "0.1000000000000000000001", "0.1000000000000000000001"},
		{"real", "real", "0.1", 0.1},
		{"real large", "real", "3.4e38", 3.4e38},
		{"real infinity", "real", "'Infinity'", math.Inf(1)},
		{"double", "double precision", "0.1", 0.1},
		{"double precise", "double precision", "1.2345678901234567", 1.2345678901234567},
		{"double nan", "double precision", "'NaN'", math.NaN()},
		{"boolean", "boolean", "true", true},
		{"date", "date", "'2024-02-29'", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"date infinity", "date", "'infinity'", "infinity"},
		// Written by a session in +05:30: the stored instant is 04:30 UTC.
		{"timestamptz", "timestamptz", "'2024-03-01 10:00:00.123456+05:30'", at},
		{"timestamptz infinity", "timestamptz", "'-infinity'", "-infinity"},
		{"timestamp", "timestamp", "'2024-03-01 04:30:00.123456'", at},
		{"text array", "text[]", `'{a,"b c",NULL,""}'`, []string{"a", "b c", "", ""}},
		{"varchar array", "varchar(20)[]", `'{x,y}'`, []string{"x", "y"}},
		{"json", "json", `'{"b": 1,  "a": [1, 2]}'`, `{"b": 1,  "a": [1, 2]}`},
		{"jsonb", "jsonb", `'{"b": 1,  "a": [1, 2]}'`, `{"a": [1, 2], "b": 1}`},
		{"enum", "TYPESCHEMA.mood", "'happy'", "happy"},
		{"domain over text", "TYPESCHEMA.email", "'ada@example.com'", "ada@example.com"},
		{"domain over int", "TYPESCHEMA.score", "42", int64(42)},
		{"uuid", "uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		// character(n)'s padding is dropped, as its cast to text does.
		{"char", "char(4)", "'ab'", "ab"},
		{"char array", "char(3)[]", `'{a,bc}'`, []string{"a", "bc"}},
		{"null", "text", "NULL", nil},
		{"numeric nan", "numeric", "'NaN'", "NaN"},
		{"integer array", "int[]", "'{1,-2,NULL}'", []string{"1", "-2", ""}},
		{"boolean array", "boolean[]", "'{t,f}'", []string{"true", "false"}},
		{"two-dimensional array", "text[]", `'{{a,b},{c,d}}'`, []string{"a", "b", "c", "d"}},
		{"bytea", "bytea", `'\x00ff'`, `\x00ff`},
		{"interval", "interval", "'1 day 02:03:04'", "1 day 02:03:04"},
		{"time", "time", "'13:14:15.5'", "13:14:15.5"},
		{"inet", "inet", "'10.0.0.1/8'", "10.0.0.1/8"},
		{"varchar", "varchar(10)", "'trail  '", "trail  "},
	}
}

// TestEveryTypeReadsTheSameEveryWay stores one value of each column type
// and reads it in the slot's first snapshot, from the stream, by polling
// and in a resync: every reader gives the same value, in the record value
// type the mapping expects, whatever the time zone of the session that
// wrote it or of the server.
func TestEveryTypeReadsTheSameEveryWay(t *testing.T) {
	cases := typeCases()
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TYPE `+sch+`.mood AS ENUM ('sad', 'happy')`)
	pgtest.Exec(t, pool, `CREATE DOMAIN `+sch+`.email AS text CHECK (VALUE LIKE '%@%')`)
	pgtest.Exec(t, pool, `CREATE DOMAIN `+sch+`.score AS int CHECK (VALUE >= 0)`)
	cols := []string{"id bigint PRIMARY KEY", "name text", "updated_at timestamptz NOT NULL DEFAULT now()"}
	var names, values []string
	for i, c := range cases {
		n := "c" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		cols = append(cols, n+" "+strings.ReplaceAll(c.typ, "TYPESCHEMA", sch))
		names = append(names, n)
		values = append(values, c.literal)
	}
	tbl := sch + ".types"
	pgtest.Exec(t, pool, `CREATE TABLE `+tbl+` (`+strings.Join(cols, ", ")+`)`)
	insert := `SET TimeZone = 'Asia/Kolkata'; INSERT INTO ` + tbl + ` (id, name, ` + strings.Join(names, ", ") + `) VALUES `
	pgtest.Exec(t, pool, insert+`(1, 'first', `+strings.Join(values, ", ")+`)`)

	slot := pgtest.Name(t, "syncd_")
	t.Cleanup(func() { dropSlotAndPublication(t, pool, slot) })
	// The server's sessions may run in another zone: the DSN asks for one
	// far from UTC, which the connector must not read times in.
	dsn := withOptions(t, pgtest.URL(), "-c TimeZone=America/Los_Angeles")
	logical := openSource(t, settings(tbl, func(s *postgres.Settings) {
		s.DSN, s.Changes, s.Slot = dsn, postgres.ChangesLogical, slot
	}))
	first, cp := pass(t, logical, "")
	// The stream: the same values again, in a second row and as an
	// update of every column of the first.
	pgtest.Exec(t, pool, insert+`(2, 'second', `+strings.Join(values, ", ")+`)`)
	sets := make([]string, len(names))
	for i, n := range names {
		sets[i] = n + " = " + n
	}
	pgtest.Exec(t, pool, `UPDATE `+tbl+` SET name = 'first again', `+strings.Join(sets, ", ")+` WHERE id = 1`)
	streamed, _ := pass(t, logical, cp)
	resync := readSnapshot(t, logical)
	poll := openSource(t, settings(tbl, func(s *postgres.Settings) { s.DSN = dsn }))
	polled := readChanges(t, poll, "", 0)

	reads := map[string][]connector.Record{
		"first snapshot": first.records(),
		"stream":         streamed.records(),
		"resync":         resync.records(),
		"poll":           polled.records(),
	}
	for way, recs := range reads {
		if len(recs) == 0 {
			t.Fatalf("%s read nothing", way)
		}
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for way, recs := range reads {
				for _, r := range recs {
					got, ok := r.Fields[names[i]]
					if !ok {
						t.Errorf("%s: row %s has no %s", way, r.ID, c.name)
						continue
					}
					if !sameValue(got, c.want) {
						t.Errorf("%s: row %s reads %s %s as %#v (%T), want %#v (%T)", way, r.ID, c.typ, c.literal, got, got, c.want, c.want)
					}
				}
			}
		})
	}
}

// sameValue is reflect.DeepEqual, with a NaN equal to a NaN.
func sameValue(a, b any) bool {
	if x, ok := a.(float64); ok && math.IsNaN(x) {
		y, ok := b.(float64)
		return ok && math.IsNaN(y)
	}
	return reflect.DeepEqual(a, b)
}

// withOptions adds libpq options to a URL DSN.
func withOptions(t *testing.T, dsn, options string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("dsn: %v", err)
	}
	q := u.Query()
	q.Set("options", options)
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
	return u.String()
}
