// Package mysqltest connects tests to the machine's real MariaDB (or
// MySQL) server and gives each test a database of its own. The server's
// address comes from SYNCD_TEST_MYSQL_DSN (default DefaultDSN, in
// github.com/go-sql-driver/mysql's format). A test that cannot reach the
// server fails, saying how to start it: tests never skip for want of a
// database.
package mysqltest

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/syncd-io/syncd/internal/testkit/pgtest"
)

// EnvDSN is the environment variable holding the test server's DSN.
const EnvDSN = "SYNCD_TEST_MYSQL_DSN"

// DefaultDSN is the test server's DSN when EnvDSN is unset.
const DefaultDSN = "root@tcp(127.0.0.1:3306)/test"

// DSN returns the test server's DSN.
func DSN() string {
	if d := os.Getenv(EnvDSN); d != "" {
		return d
	}
	return DefaultDSN
}

const howToStart = "start it with `start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd` " +
	"(as root; the test database with `mariadb -e 'CREATE DATABASE test'`), or set " + EnvDSN

// Connect returns a connection pool on the test server's database,
// closed at the test's end, and fails the test, naming the DSN's address
// and how to start the server, when it cannot connect.
func Connect(t testing.TB) *sql.DB {
	t.Helper()
	return open(t, DSN())
}

func open(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("%s: %v", EnvDSN, err)
	}
	cfg.ParseTime = false
	cfg.ClientFoundRows = true
	cfg.InterpolateParams = true
	db := sql.OpenDB(must(t, cfg))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		t.Fatalf("MariaDB at %s (%s) unreachable: %v\n%s", cfg.Addr, cfg.DBName, err, howToStart)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func must(t testing.TB, cfg *mysql.Config) driver.Connector {
	t.Helper()
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewDatabase creates a uniquely named database for the test, dropped
// with everything in it at the test's end, and returns its name and the
// DSN that selects it.
func NewDatabase(t testing.TB) (name, dsn string) {
	t.Helper()
	admin := Connect(t)
	name = pgtest.Name(t, "t_")
	Exec(t, admin, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE `"+name+"`"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	cfg, _ := mysql.ParseDSN(DSN())
	cfg.DBName = name
	return name, cfg.FormatDSN()
}

// Open connects to a database made by NewDatabase.
func Open(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	return open(t, dsn)
}

// Exec runs a statement, failing the test on error.
func Exec(t testing.TB, db *sql.DB, query string, args ...any) sql.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := db.ExecContext(ctx, query, args...)
	if err != nil {
		t.Fatalf("exec %q: %v", query, err)
	}
	return res
}

// WithGlobalTimeZone sets the server's global time_zone to zone while
// open runs: the sessions open opens keep it as their zone, as an
// application's do, and whatever reads the global zone sees it. The
// server is shared with other tests and test processes: the window holds
// a server lock (GET_LOCK), so that two never overlap, and the previous
// zone is restored as soon as open returns, and at the test's end should
// open stop it.
func WithGlobalTimeZone(t testing.TB, zone string, open func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := Connect(t).Conn(ctx)
	if err != nil {
		t.Fatalf("connect to set the global time_zone: %v", err)
	}
	var locked sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK('syncd_test_global_time_zone', 120)").Scan(&locked); err != nil || locked.Int64 != 1 {
		_ = conn.Close()
		t.Fatalf("lock the global time_zone (another test holds it?): %v", err)
	}
	var prev string
	restore := sync.OnceFunc(func() {
		defer conn.Close()
		if prev != "" {
			if _, err := conn.ExecContext(ctx, "SET GLOBAL time_zone = ?", prev); err != nil {
				t.Errorf("restore the global time_zone to %s: %v", prev, err)
			}
		}
		if _, err := conn.ExecContext(ctx, "DO RELEASE_LOCK('syncd_test_global_time_zone')"); err != nil {
			t.Errorf("unlock the global time_zone: %v", err)
		}
	})
	t.Cleanup(restore)
	if err := conn.QueryRowContext(ctx, "SELECT @@global.time_zone").Scan(&prev); err != nil {
		t.Fatalf("read the global time_zone: %v", err)
	}
	if _, err := conn.ExecContext(ctx, "SET GLOBAL time_zone = ?", zone); err != nil {
		t.Fatalf("set the global time_zone to %s: %v", zone, err)
	}
	defer restore()
	open()
}
