package mysql

import (
	"database/sql"
	"strings"
	"testing"
)

// TestBinlogBlocker: what keeps changes: auto from the binlog, with the
// setting or grant to change, including the cases the test server cannot
// show without a restart (log_bin off).
func TestBinlogBlocker(t *testing.T) {
	ok := serverState{logBin: true, format: "ROW", rowImage: "FULL", replSlave: true, replCli: true}
	with := func(f func(*serverState)) serverState { s := ok; f(&s); return s }
	for _, c := range []struct {
		name string
		view bool
		st   serverState
		want string
	}{
		{"streams", false, ok, ""},
		{"row format in lower case", false, with(func(s *serverState) { s.format, s.rowImage = "row", "full" }), ""},
		{"a view", true, ok, "is a view"},
		{"binlog off", false, with(func(s *serverState) { s.logBin = false }), "set log_bin"},
		{"statement format", false, with(func(s *serverState) { s.format = "STATEMENT" }), "binlog_format is STATEMENT: SET GLOBAL binlog_format = 'ROW'"},
		{"mixed format", false, with(func(s *serverState) { s.format = "MIXED" }), "binlog_format is MIXED"},
		{"minimal row image", false, with(func(s *serverState) { s.rowImage = "MINIMAL" }), "binlog_row_image is MINIMAL: SET GLOBAL binlog_row_image = 'FULL'"},
		{"no replication slave", false, with(func(s *serverState) { s.replSlave = false }), "lacks REPLICATION SLAVE: GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO"},
		{"neither grant", false, with(func(s *serverState) { s.replSlave, s.replCli = false, false }), "lacks REPLICATION SLAVE and REPLICATION CLIENT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := binlogBlocker("`db`.`t`", c.view, c.st)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("binlogBlocker = %q, want %q", got, c.want)
			}
		})
	}
}

func TestReplicationGrants(t *testing.T) {
	for _, c := range []struct {
		name          string
		lines         []string
		slave, client bool
	}{
		{"all privileges", []string{"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"}, true, true},
		{"both", []string{"GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `syncd`@`%`"}, true, true},
		{"MariaDB 10.5 names", []string{"GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `syncd`@`%`"}, true, true},
		{"only on one database", []string{"GRANT USAGE ON *.* TO `u`@`%`", "GRANT ALL PRIVILEGES ON `shop`.* TO `u`@`%`"}, false, false},
		{"slave admin is not slave", []string{"GRANT REPLICATION SLAVE ADMIN, REPLICATION CLIENT ON *.* TO `u`@`%`"}, false, true},
		{"none", nil, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, cl := replicationGrants(c.lines)
			if s != c.slave || cl != c.client {
				t.Errorf("replicationGrants = %v, %v; want %v, %v", s, cl, c.slave, c.client)
			}
		})
	}
}

// TestGTIDForms parses, formats and advances both GTID forms: MariaDB's
// domain-server-sequence (one per domain) and MySQL's uuid:intervals.
func TestGTIDForms(t *testing.T) {
	const u1, u2 = "3e11fa47-71ca-11e1-9e33-c80aa9429562", "b9b4712a-df64-11e3-b391-60672090eb04"
	for _, c := range []struct {
		name, flavor, set, add, want, bad string
	}{
		{name: "mariadb one domain", flavor: flavorMariaDB, set: "0-1-41", add: "0-1-42", want: "0-1-42"},
		{name: "mariadb empty", flavor: flavorMariaDB, set: "", add: "0-1-1", want: "0-1-1"},
		{name: "mariadb domains in order", flavor: flavorMariaDB, set: "10-1-5,2-1-9", add: "2-1-10", want: "2-1-10,10-1-5"},
		{name: "mariadb another server of the domain", flavor: flavorMariaDB, set: "0-1-41", add: "0-2-42", want: "0-2-42"},
		{name: "mysql interval grows", flavor: flavorMySQL, set: u1 + ":1-41", add: u1 + ":42", want: u1 + ":1-42"},
		{name: "mysql upper case uuid", flavor: flavorMySQL, set: strings.ToUpper(u1) + ":1-5", add: u1 + ":6", want: u1 + ":1-6"},
		{name: "mysql gap", flavor: flavorMySQL, set: u1 + ":1-5", add: u1 + ":9", want: u1 + ":1-5:9"},
		{name: "mysql two servers", flavor: flavorMySQL, set: u2 + ":1-3," + u1 + ":1-5", add: u2 + ":4", want: u1 + ":1-5," + u2 + ":1-4"},
		{name: "mariadb malformed", flavor: flavorMariaDB, set: "0-1", bad: "not domain-server-sequence"},
		{name: "mysql malformed", flavor: flavorMySQL, set: "12345", bad: "not uuid:interval"},
		{name: "unknown flavor", flavor: "oracle", set: "1", bad: "not mariadb or mysql"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseGTIDSet(c.flavor, c.set)
			if c.bad != "" {
				if err == nil || !strings.Contains(err.Error(), c.bad) {
					t.Fatalf("parse %q: %v, want %q", c.set, err, c.bad)
				}
				return
			}
			if err != nil {
				t.Fatalf("parse %q: %v", c.set, err)
			}
			got, err := addGTID(c.flavor, c.set, c.add)
			if err != nil || got != c.want {
				t.Fatalf("addGTID(%q, %q) = %q, %v; want %q", c.set, c.add, got, err, c.want)
			}
			again, err := parseGTIDSet(c.flavor, got)
			if err != nil || formatGTIDSet(c.flavor, again) != got {
				t.Errorf("%q does not round-trip: %v", got, err)
			}
		})
	}
}

func TestBinlogCheckpoint(t *testing.T) {
	for _, c := range []struct {
		name, checkpoint string
		ok               bool
		bad              bool
	}{
		{"empty", "", false, false},
		{"poll mode's", `{"u":"2026-01-01 00:00:00.000000","id":"4"}`, false, false},
		{"file and offset", `{"binlog":"mysql-bin.000003","pos":493}`, true, false},
		{"mariadb gtid", `{"binlog":"mysql-bin.000003","pos":493,"gtid":"0-1-7","flavor":"mariadb"}`, true, false},
		{"bad gtid", `{"binlog":"mysql-bin.000003","pos":493,"gtid":"x","flavor":"mariadb"}`, false, true},
		{"not json", `mysql-bin.000003:493`, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ok, err := parseBinlogCheckpoint(c.checkpoint)
			if ok != c.ok || (err != nil) != c.bad {
				t.Fatalf("parse = %+v, %v, %v", p, ok, err)
			}
			if ok && p.String() != c.checkpoint {
				t.Errorf("%q written back as %q", c.checkpoint, p.String())
			}
		})
	}
	a := binlogPos{File: "mysql-bin.000009", Pos: 100}
	for _, c := range []struct {
		b    binlogPos
		want bool
	}{
		{binlogPos{File: "mysql-bin.000009", Pos: 100}, true},
		{binlogPos{File: "mysql-bin.000009", Pos: 101}, false},
		{binlogPos{File: "mysql-bin.000010", Pos: 4}, false},
		{binlogPos{File: "mysql-bin.000008", Pos: 9999}, true},
		{binlogPos{File: "other-bin.000001", Pos: 4}, false},
	} {
		if got := a.atOrPast(c.b); got != c.want {
			t.Errorf("%v atOrPast %v = %v", a, c.b, got)
		}
	}
	files := []binlogFile{{"b.000001", 1000}, {"b.000002", 500}, {"b.000003", 300}}
	if n := binlogBehind(files, binlogPos{File: "b.000001", Pos: 900}, binlogPos{File: "b.000003", Pos: 200}); n != 100+500+200 {
		t.Errorf("binlogBehind = %d, want 800", n)
	}
}

// TestBinlogText: binlog values in the text form a SELECT gives them.
func TestBinlogText(t *testing.T) {
	for _, c := range []struct {
		name, typ string
		v         any
		want      string
		null      bool
	}{
		{"unsigned int at its top", "int(10) unsigned", int32(-1), "4294967295", false},
		{"unsigned bigint at its top", "bigint(20) unsigned", int64(-1), "18446744073709551615", false},
		{"unsigned mediumint", "mediumint(8) unsigned", int32(-1), "16777215", false},
		{"signed int", "int(11)", int32(-5), "-5", false},
		{"enum", "enum('Lead','Cust''omer')", int64(2), "Cust'omer", false},
		{"empty enum", "enum('a')", int64(0), "", false},
		{"set", "set('a','b','c')", int64(5), "a,c", false},
		{"bit", "bit(16)", int64(0x0102), "\x01\x02", false},
		{"float", "float", float32(0.1), "0.1", false},
		{"year", "year(4)", 2026, "2026", false},
		{"bytes", "blob", []byte("ab"), "ab", false},
		{"null", "int(11)", nil, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := binlogText(column{typ: c.typ}, c.v)
			if err != nil || got != (sql.NullString{String: c.want, Valid: !c.null}) {
				t.Errorf("binlogText = %#v, %v; want %q", got, err, c.want)
			}
		})
	}
}
