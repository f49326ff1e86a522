package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/syncd-io/syncd/internal/testkit/mysqltest"
)

// TestValidateMySQLBinlogFallback: syncd validate says, as a note, that a
// mysql connector with changes: auto (the default) polls and which grant
// to give when its user lacks REPLICATION SLAVE and REPLICATION CLIENT;
// with changes: binlog the same is a problem; a user with the grants
// streams and gets no such note. (The binlog off or not in ROW format
// would take a restart of the shared server: binlogBlocker's table test
// covers those messages.)
func TestValidateMySQLBinlogFallback(t *testing.T) {
	name, rootDSN := mysqltest.NewDatabase(t)
	db := mysqltest.Open(t, rootDSN)
	mysqltest.Exec(t, db, `CREATE TABLE contacts (id INT AUTO_INCREMENT PRIMARY KEY, first_name TEXT, email TEXT,
		updated_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6))`)
	user := fmt.Sprintf("syncd_norepl_%d", time.Now().UnixNano()%1e9)
	mysqltest.Exec(t, db, "CREATE USER '"+user+"'@'%' IDENTIFIED BY 'pw-123'")
	t.Cleanup(func() { _, _ = db.Exec("DROP USER '" + user + "'@'%'") })
	mysqltest.Exec(t, db, "GRANT SELECT, INSERT, UPDATE, DELETE ON `"+name+"`.* TO '"+user+"'@'%'")
	cfg, err := mysql.ParseDSN(rootDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Passwd = user, "pw-123"
	userDSN := cfg.FormatDSN()
	config := func(dsn, changes string) string {
		if changes == "" {
			return mysqlConfig(dsn, "contacts")
		}
		return mysqlConfig(dsn, "contacts", "changes: "+changes)
	}
	const polls = "changes: auto polls"
	validate := func(t *testing.T, yaml string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), "syncd.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, serr, err := runMain(t, "validate", "--config", path)
		if err != nil {
			t.Fatalf("validate: %v\n%s", err, serr)
		}
		return serr
	}
	t.Run("auto without the grants polls and says which grant", func(t *testing.T) {
		serr := validate(t, config(userDSN, ""))
		wantLines(t, "stderr", serr, "note: connectors[shop]: "+polls+": the user lacks REPLICATION SLAVE and REPLICATION CLIENT: "+
			"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO <user>")
	})
	t.Run("binlog without the grants is a problem", func(t *testing.T) {
		wantInvalid(t, config(userDSN, "binlog"), 1, "changes: binlog: the user lacks REPLICATION SLAVE and REPLICATION CLIENT")
	})
	t.Run("auto with the grants streams, no note", func(t *testing.T) {
		if serr := validate(t, config(rootDSN, "")); strings.Contains(serr, polls) {
			t.Errorf("validate notes that a user with the grants polls:\n%s", serr)
		}
	})
}
