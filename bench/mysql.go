package bench

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/syncd-io/syncd/internal/configfile"
)

// DefaultMySQLDSN is the server the MariaDB/MySQL scenarios use when
// SYNCD_BENCH_MYSQL_DSN and SYNCD_TEST_MYSQL_DSN are unset.
const DefaultMySQLDSN = "root@tcp(127.0.0.1:3306)/test"

// MySQLDSN returns the server of the MariaDB/MySQL scenarios.
func MySQLDSN() string {
	for _, k := range []string{"SYNCD_BENCH_MYSQL_DSN", "SYNCD_TEST_MYSQL_DSN"} {
		if d := os.Getenv(k); d != "" {
			return d
		}
	}
	return DefaultMySQLDSN
}

// mysqlTable is a generated contacts table in a database of its own,
// dropped by drop. Its updated_at moves on every UPDATE (ON UPDATE
// CURRENT_TIMESTAMP(6)), as poll mode needs.
type mysqlTable struct {
	db   *sql.DB
	dsn  string // selects the table's database
	name string // the database
}

// newMySQLTable creates the table holding rows 1..n of Row.
func newMySQLTable(ctx context.Context, dsn string, n int) (*mysqlTable, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("SYNCD_BENCH_MYSQL_DSN: %w", err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err == nil {
		err = admin.PingContext(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("MariaDB unreachable (set SYNCD_BENCH_MYSQL_DSN; start the server with "+
			"`start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd`): %w", err)
	}
	t := &mysqlTable{db: admin, name: fmt.Sprintf("syncd_bench_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)}
	cfg.DBName = t.name
	t.dsn = cfg.FormatDSN()
	stmts := []string{
		"CREATE DATABASE " + t.name + " CHARACTER SET utf8mb4",
		`CREATE TABLE ` + t.name + `.contacts (id bigint PRIMARY KEY, first_name varchar(255), last_name varchar(255),
			email varchar(255), phone varchar(255), company varchar(255),
			updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`,
	}
	const page = 1000
	for lo := 1; lo <= n; lo += page {
		var b strings.Builder
		b.WriteString("INSERT INTO " + t.name + ".contacts (id, first_name, last_name, email, phone, company) VALUES ")
		for i := lo; i < lo+page && i <= n; i++ {
			if i > lo {
				b.WriteString(", ")
			}
			r := Row(i, "")
			fmt.Fprintf(&b, "(%s, '%s', '%s', '%s', '%s', '%s')", r[0], r[1], r[2], r[3], r[4], r[5])
		}
		stmts = append(stmts, b.String())
	}
	for _, s := range stmts {
		if _, err := admin.ExecContext(ctx, s); err != nil {
			t.drop()
			return nil, fmt.Errorf("set up the table: %w", err)
		}
	}
	return t, nil
}

// connector follows the table; mode is "binlog" or "poll".
func (t *mysqlTable) connector(mode string) (configfile.Connector, func()) {
	return configfile.Connector{Type: "mysql", Settings: map[string]any{"dsn": t.dsn, "table": "contacts", "batchSize": 1000, "changes": mode}},
		func() {}
}

func (t *mysqlTable) setLastName(ctx context.Context, id int, name string) error {
	_, err := t.db.ExecContext(ctx, "UPDATE "+t.name+".contacts SET last_name = ? WHERE id = ?", name, id)
	return err
}

func (t *mysqlTable) setAllLastNames(ctx context.Context) error {
	_, err := t.db.ExecContext(ctx, "UPDATE "+t.name+".contacts SET last_name = CONCAT('Tx-', id)")
	return err
}

// drop removes the database and closes the pool.
func (t *mysqlTable) drop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = t.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+t.name)
	_ = t.db.Close()
}
