package demo

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/syncd-io/syncd/workspace"
)

// MySQLDSNEnv names the environment variable holding the MariaDB or MySQL
// server the mysql demo uses; DefaultMySQLDSN when unset.
const (
	MySQLDSNEnv     = "SYNCD_DEMO_MYSQL_DSN"
	DefaultMySQLDSN = "root@tcp(127.0.0.1:3306)/test"
	mysqlDemoTable  = "syncd_demo_contacts"
)

// mysqlDemo shows the two-way sync with a MySQL or MariaDB table: it
// (re)creates the table syncd_demo_contacts in the database of
// $SYNCD_DEMO_MYSQL_DSN (default root@tcp(127.0.0.1:3306)/test), fills it,
// and syncs it with the workspace emulator both ways.
func (c *runner) mysqlDemo(ctx context.Context, dir string, rows int, serve bool) error {
	out := c.o.Out
	dsn := DefaultMySQLDSN
	if v := c.o.Getenv(MySQLDSNEnv); v != "" {
		dsn = v
	}
	db, err := openDemoMySQL(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := fillDemoTable(ctx, db, rows); err != nil {
		return err
	}
	emu, err := startDemoEmulator()
	if err != nil {
		return err
	}
	defer emu.Close()
	fmt.Fprintf(out, "1. Started a workspace emulator at %s; created the table %s with %d rows (TIMESTAMP(6) ON UPDATE cursor, DATETIME soft delete)\n", emu.URL, mysqlDemoTable, rows)

	getenv := c.o.Getenv
	c.o.Getenv = func(k string) string {
		if k == MySQLDSNEnv {
			return dsn
		}
		return getenv(k)
	}
	demo, err := c.startTwoWayDemo(ctx, dir, emu.URL, "mysql", mysqlDemoConnectors())
	c.o.Getenv = getenv
	if err != nil {
		return err
	}
	defer demo.Close()
	d := demo.d
	fmt.Fprintf(out, "2. Wrote %s (type: mysql, direction: both, onSourceDelete: delete; the dsn as ${%s})\n", demo.cfgPath, MySQLDSNEnv)
	demo.printHealthPage(out)

	sums, err := d.RunOnce(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "3. Forward pass: every row becomes a workspace contact (source custom-mysql)\n   %s\n", sums[0])

	// A person edits three contacts in the workspace's app.
	start := time.Now()
	if err := editThreeCompanies(ctx, emu); err != nil {
		return err
	}
	reached := waitFor(10*time.Second, func() bool {
		var n int
		err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+mysqlDemoTable+" WHERE company LIKE 'Head of Sales %'").Scan(&n)
		return err == nil && n == 3
	})
	fmt.Fprintf(out, "4. Three edits made in the workspace app reached the table (an UPDATE each, ON UPDATE moved updated_at): %v, after %s\n",
		reached, time.Since(start).Round(time.Millisecond))

	// The application changes the table: one new row, one edit, one soft delete.
	time.Sleep(20 * time.Millisecond)
	for _, q := range []string{
		"INSERT INTO " + mysqlDemoTable + " (first_name, last_name, email, phone, company) VALUES ('Grace', 'Hopper 🚀', 'grace@example.com', '(415) 555-0999', 'Navy')",
		"UPDATE " + mysqlDemoTable + " SET last_name = 'Lovelace-Byron' WHERE id = 1",
		"UPDATE " + mysqlDemoTable + " SET deleted_at = NOW(6) WHERE id = 2",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("demo table: %w", err)
		}
	}
	wsBefore := emu.Stats()
	if sums, err = d.RunOnce(ctx); err != nil {
		return err
	}
	wsAfter := emu.Stats()
	fmt.Fprintf(out, "5. The application inserted a row (a name with an emoji), edited one and soft-deleted one: %d create, %d PATCH, %d delete in the workspace; syncd's own three writes were recognised\n   %s\n",
		wsAfter.Requests[workspace.RouteCreateContact]-wsBefore.Requests[workspace.RouteCreateContact],
		wsAfter.Requests[workspace.RouteUpdateContact]-wsBefore.Requests[workspace.RouteUpdateContact],
		wsAfter.Requests[workspace.RouteDeleteContact]-wsBefore.Requests[workspace.RouteDeleteContact], sums[0])
	if serve {
		fmt.Fprintf(out, "6. Look around: curl -s %s/_emulator/contacts ; the table: mariadb -e 'SELECT * FROM %s' ; the state file: %s\n", emu.URL, mysqlDemoTable, demo.cfg.State.Path)
	} else {
		// The emulator stops with the demo: no address to curl.
		fmt.Fprintf(out, "6. Look around: the table: mariadb -e 'SELECT * FROM %s' ; the state file: %s (the workspace emulator stopped with the demo)\n", mysqlDemoTable, demo.cfg.State.Path)
	}
	return demo.finish(ctx, out, 7, serve)
}

// openDemoMySQL connects, saying how to start MariaDB when it cannot.
func openDemoMySQL(ctx context.Context, dsn string) (*sql.DB, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (the form is user:pass@tcp(host:3306)/db)", MySQLDSNEnv, err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MySQLDSNEnv, err)
	}
	db := sql.OpenDB(conn)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("the mysql demo needs a MariaDB or MySQL server at %s, database %s (set %s): %w; start one with `start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd`",
			cfg.Addr, cfg.DBName, MySQLDSNEnv, err)
	}
	return db, nil
}

// fillDemoTable recreates the demo's own table with the demo's people.
func fillDemoTable(ctx context.Context, db *sql.DB, rows int) error {
	stmts := []string{
		"DROP TABLE IF EXISTS " + mysqlDemoTable,
		"CREATE TABLE " + mysqlDemoTable + ` (id BIGINT AUTO_INCREMENT PRIMARY KEY,
			first_name VARCHAR(100), last_name VARCHAR(100), email VARCHAR(200), phone VARCHAR(40), company VARCHAR(100),
			updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
			deleted_at DATETIME(6) NULL, KEY (updated_at, id)) CHARACTER SET utf8mb4`,
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("demo table: %w", err)
		}
	}
	people := SamplePeople(rows)
	if len(people) == 0 {
		return nil
	}
	var args []any
	for _, p := range people {
		args = append(args, p[1], p[2], p[3], p[4], p[5])
	}
	q := "INSERT INTO " + mysqlDemoTable + " (first_name, last_name, email, phone, company) VALUES " +
		strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?), ", len(people)), ", ")
	if _, err := db.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("demo table: %w", err)
	}
	return nil
}

func mysqlDemoConnectors() string {
	return `  - name: shop
    type: mysql
    direction: both
    onSourceDelete: delete
    schedule: "@every 10s"
    settings:
      dsn: ${` + MySQLDSNEnv + `}
      table: ` + mysqlDemoTable + `
      deletedAtColumn: deleted_at
      lookback: 0s
    mapping:
      fields:
        firstName: first_name
        lastName: last_name
        company: company
        emails.work: { from: email, transform: [email] }
        phoneNumbers.work: { from: phone, transform: [e164], region: US }
`
}
