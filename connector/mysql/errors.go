package mysql

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"regexp"
	"strconv"

	"github.com/go-sql-driver/mysql"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/sqlkit"
)

// changeError is a change's error as Write reports it.
func (s *Source) changeError(c connector.Change, err error) error {
	return sqlkit.ChangeError(c, s.tbl.name, s.red.Redact(err), refusal)
}

// maybeSent reports whether a statement that failed with err may have
// reached the server and been applied: not when the server answered (a
// MySQL error, no row), the connection was never made, or the driver
// knows nothing was sent (driver.ErrBadConn).
func maybeSent(err error) bool {
	if errors.Is(err, mysql.ErrInvalidConn) {
		return true // the connection broke mid-statement
	}
	var me *mysql.MySQLError
	var oe *net.OpError
	switch {
	case errors.As(err, &me), errors.Is(err, sql.ErrNoRows), errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrTxDone):
		return false
	case errors.As(err, &oe) && oe.Op == "dial":
		return false
	}
	return true
}

// refusal marks an error of the server that refuses the data or the
// statement for good as the connector contract's refusal, naming the
// column the server's message names: nothing was written, and the same
// change is refused again. Passing conditions (a lost connection, a
// deadlock or lock wait timeout, too many connections, a read-only
// server) stay unmarked: they may succeed next time.
func refusal(err error) error {
	var me *mysql.MySQLError
	if !errors.As(err, &me) || !definite(me.Number) {
		return err
	}
	field := ""
	if m := columnName.FindStringSubmatch(me.Message); m != nil {
		field = m[1]
	} else if m := keyName.FindStringSubmatch(me.Message); m != nil {
		field = m[1]
	}
	return &connector.RefusedError{Field: field, Code: strconv.Itoa(int(me.Number)), Reason: me.Message, Err: err}
}

// columnName finds the column in the server's messages: "Column 'x'
// cannot be null", "Data too long for column 'x' at row 1", "Incorrect
// integer value: 'a' for column `db`.`t`.`x` at row 1" (MariaDB), "Field
// 'x' doesn't have a default value".
var columnName = regexp.MustCompile("(?:[Cc]olumn|Field) (?:[`'][^`']*[`']\\.)*[`']([^`']+)[`']")

// keyName finds the key of a duplicate: "Duplicate entry 'a' for key
// 'email'" (MySQL 8: 'contacts.email').
var keyName = regexp.MustCompile("for key [`']?(?:[^`'.]*\\.)?([^`'.]+)[`']?")

// definite reports whether a server error number refuses the data or the
// statement for good (see MySQL's "Server Error Message Reference" and
// MariaDB's "MariaDB Error Codes"; FACTS.md lists them).
func definite(n uint16) bool {
	switch n {
	case 1048, // ER_BAD_NULL_ERROR: column cannot be null
		1062,       // ER_DUP_ENTRY: duplicate entry for key
		1054,       // ER_BAD_FIELD_ERROR: unknown column
		1136,       // ER_WRONG_VALUE_COUNT_ON_ROW
		1142, 1143, // command or column denied
		1264,       // ER_WARN_DATA_OUT_OF_RANGE
		1265,       // WARN_DATA_TRUNCATED
		1292,       // ER_TRUNCATED_WRONG_VALUE: incorrect datetime/double value
		1364,       // ER_NO_DEFAULT_FOR_FIELD
		1366,       // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: incorrect integer/string value
		1367,       // ER_ILLEGAL_VALUE_FOR_TYPE
		1406,       // ER_DATA_TOO_LONG
		1451, 1452, // foreign key constraint fails
		1644,                         // ER_SIGNAL_EXCEPTION: a trigger's SIGNAL refusing the row
		1690,                         // ER_DATA_OUT_OF_RANGE
		3140,                         // ER_INVALID_JSON_TEXT (MySQL)
		3819,                         // ER_CHECK_CONSTRAINT_VIOLATED (MySQL)
		4025,                         // ER_CONSTRAINT_FAILED (MariaDB CHECK)
		1471, 1288, 1369, 1748, 3105: // not insertable/updatable view, CHECK OPTION, partition, generated column
		return true
	}
	return false
}
