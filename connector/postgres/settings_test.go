package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/postgres"
	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

func TestRegisteredType(t *testing.T) {
	typ, ok := connector.Lookup("postgres")
	if !ok {
		t.Fatal("type postgres not registered")
	}
	if !typ.Writable || !typ.Incremental || !typ.SoftDelete {
		t.Errorf("postgres type is Writable=%v Incremental=%v SoftDelete=%v, want all true", typ.Writable, typ.Incremental, typ.SoftDelete)
	}
	want := &postgres.Settings{IDColumn: "id", UpdatedAtColumn: "updated_at", BatchSize: 500, Changes: postgres.ChangesAuto}
	if got := typ.NewSettings(); !reflect.DeepEqual(got, want) {
		t.Errorf("NewSettings() = %#v, want %#v", got, want)
	}
}

func TestSettingsValidate(t *testing.T) {
	valid := func(mod func(s *postgres.Settings)) *postgres.Settings {
		s := postgres.NewSettings()
		s.DSN = "postgres://u:pw@db.invalid:5432/app"
		s.Table = "crm.contacts"
		mod(s)
		return s
	}
	neg := -time.Second
	tests := []struct {
		name     string
		settings *postgres.Settings
		want     []string
	}{
		{"defaults, never connecting", valid(func(*postgres.Settings) {}), nil},
		{"key value dsn", valid(func(s *postgres.Settings) { s.DSN = "host=db.invalid user=u dbname=app" }), nil},
		{"no dsn", valid(func(s *postgres.Settings) { s.DSN = "" }), []string{"dsn: required"}},
		{"unparsable dsn", valid(func(s *postgres.Settings) { s.DSN = "postgres://u:pw@db:port/app" }), []string{"dsn: "}},
		{"no table", valid(func(s *postgres.Settings) { s.Table = " " }), []string{"table: required"}},
		{"no id column", valid(func(s *postgres.Settings) { s.IDColumn = "" }), []string{"idColumn: required"}},
		{"cursor is the id", valid(func(s *postgres.Settings) { s.UpdatedAtColumn = "id" }), []string{"updatedAtColumn: "}},
		{"deleted is the cursor", valid(func(s *postgres.Settings) { s.DeletedAtColumn = "updated_at" }), []string{"deletedAtColumn: "}},
		{"zero batch", valid(func(s *postgres.Settings) { s.BatchSize = 0 }), []string{"batchSize: "}},
		{"column twice", valid(func(s *postgres.Settings) { s.Columns = []string{"a", "a"} }), []string{"columns: "}},
		{"negative lookback", valid(func(s *postgres.Settings) { s.Lookback = &neg }), []string{"lookback: "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.settings.Validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("Validate() = %v, want %d errors", errs, len(tt.want))
			}
			for i, w := range tt.want {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %d = %q, want it to contain %q", i, errs[i], w)
				}
			}
		})
	}
}

func TestOpenErrorsNameTheProblem(t *testing.T) {
	pool, sch := schema(t)
	pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, updated_at timestamptz NOT NULL)`)
	pgtest.Exec(t, pool, `CREATE SEQUENCE `+sch+`.seq`)
	tests := []struct {
		name string
		s    *postgres.Settings
		want string
	}{
		{"missing table", settings(sch + ".nope"), `table: "` + sch + `.nope" not found`},
		{"missing schema", settings("nope_schema_x.c"), `table: "nope_schema_x.c" not found`},
		{"not a table", settings(sch + ".seq"), "is not a table or view"},
		{"missing id column", settings(sch+".c", func(s *postgres.Settings) { s.IDColumn = "pk" }), `idColumn: no column "pk"`},
		{"missing cursor column", settings(sch+".c", func(s *postgres.Settings) { s.UpdatedAtColumn = "modified" }), `updatedAtColumn: no column "modified"`},
		{"missing deleted column", settings(sch+".c", func(s *postgres.Settings) { s.DeletedAtColumn = "gone" }), `deletedAtColumn: no column "gone"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openErr(t, tt.s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("open = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestDSNNeverInErrors opens connectors whose dsn holds a password in
// ways that fail, and reads from one whose table went away: no error
// and no log line may hold the password or the dsn.
func TestDSNNeverInErrors(t *testing.T) {
	const password = "Sup3r-S3cret/Pw@1"
	u, err := url.Parse(pgtest.URL())
	if err != nil {
		t.Fatal(err)
	}
	withPassword := func(mod func(u *url.URL)) string {
		c := *u
		c.User = url.UserPassword(c.User.Username(), password)
		mod(&c)
		return c.String()
	}
	host := u.Hostname()
	dsns := map[string]string{
		"refused port":     withPassword(func(u *url.URL) { u.Host = host + ":1" }),
		"unknown database": withPassword(func(u *url.URL) { u.Path = "/no_such_database_syncd" }),
		"unknown host":     withPassword(func(u *url.URL) { u.Host = "no-such-host.invalid:5432" }),
		"bad port":         strings.Replace(withPassword(func(*url.URL) {}), host+":", host+":x", 1),
		"key value":        "host=" + host + " port=1 user=postgres password='" + password + "' dbname=test connect_timeout=5",
		"unknown option":   withPassword(func(u *url.URL) { u.RawQuery = "sslmode=disable&bogus_option=1" }),
	}
	hook := test.NewGlobal()
	logrus.SetLevel(logrus.DebugLevel)
	defer logrus.SetLevel(logrus.InfoLevel)

	check := func(t *testing.T, what, msg, dsn string) {
		t.Helper()
		for _, secret := range []string{password, url.QueryEscape(password), url.PathEscape(password), dsn} {
			if strings.Contains(msg, secret) {
				t.Errorf("%s holds a secret: %s", what, msg)
			}
		}
	}
	for name, dsn := range dsns {
		t.Run(name, func(t *testing.T) {
			s := settings("public.x", func(s *postgres.Settings) { s.DSN = dsn })
			for _, e := range s.Validate() {
				check(t, "Validate error", e.Error(), dsn)
			}
			check(t, "settings printed", fmt.Sprintf("%v %+v %s", s, *s, s), dsn)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			typ, _ := connector.Lookup(postgres.TypeName)
			_, err := typ.Open(ctx, connector.Options{Name: "secretive", Settings: s})
			if err == nil {
				t.Fatal("open succeeded")
			}
			t.Logf("error: %v", err)
			check(t, "Open error", err.Error(), dsn)
		})
	}

	t.Run("read after the table is dropped", func(t *testing.T) {
		pool, sch := schema(t)
		pgtest.Exec(t, pool, `CREATE TABLE `+sch+`.c (id int PRIMARY KEY, updated_at timestamptz NOT NULL)`)
		dsn := withPassword(func(*url.URL) {})
		src := openSource(t, settings(sch+".c", func(s *postgres.Settings) { s.DSN = dsn }))
		pgtest.Exec(t, pool, `DROP TABLE `+sch+`.c`)
		err := src.Snapshot(context.Background(), func(context.Context, connector.Batch) error { return nil })
		if err == nil {
			t.Fatal("read of a dropped table succeeded")
		}
		check(t, "read error", err.Error(), dsn)
		res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpDelete, ID: "1"}})
		if err != nil || res[0].Err == nil {
			t.Fatalf("write to a dropped table = %v, %v", res, err)
		}
		check(t, "write error", res[0].Err.Error(), dsn)
	})

	for _, e := range hook.AllEntries() {
		line, _ := e.String()
		check(t, "log line", line, "")
	}
}
