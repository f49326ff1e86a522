package mysql

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// Flavors of GTID, as go-mysql names them.
const (
	flavorMariaDB = gomysql.MariaDBFlavor // domain-server-sequence: 0-1-42,1-3-7
	flavorMySQL   = gomysql.MySQLFlavor   // server_uuid:interval: 3e11fa47-...:1-42
)

// binlogPos is a place in the server's binary log: every transaction
// that committed before it has been delivered. File and Pos are always
// set (the end of the last transaction delivered, as the server wrote
// it); GTID, when the server has GTIDs (always on MariaDB, with
// gtid_mode=ON on MySQL), is the set of transactions before it, in the
// flavor's form, and is what a stream resumes from: it survives a
// failover to a replica, whose file names differ.
type binlogPos struct {
	File   string `json:"binlog"`
	Pos    uint32 `json:"pos"`
	GTID   string `json:"gtid,omitempty"`
	Flavor string `json:"flavor,omitempty"`
}

// String is the checkpoint form of the position.
func (p binlogPos) String() string {
	b, _ := json.Marshal(p)
	return string(b)
}

// describe is the position for logs and status: the GTID when there is
// one, else file:offset.
func (p binlogPos) describe() string {
	if p.GTID != "" {
		return "GTID " + p.GTID
	}
	return fmt.Sprintf("%s:%d", p.File, p.Pos)
}

// parseBinlogCheckpoint reads a checkpoint of binlog mode; ok is false
// for the empty checkpoint and for one of poll mode (a sqlkit.Position),
// after which the table is read whole once.
func parseBinlogCheckpoint(checkpoint string) (binlogPos, bool, error) {
	if checkpoint == "" {
		return binlogPos{}, false, nil
	}
	var p binlogPos
	if err := json.Unmarshal([]byte(checkpoint), &p); err != nil {
		return p, false, fmt.Errorf("checkpoint %q: %w", checkpoint, err)
	}
	if p.File == "" {
		return p, false, nil
	}
	if p.GTID != "" {
		if _, err := parseGTIDSet(p.Flavor, p.GTID); err != nil {
			return p, false, fmt.Errorf("checkpoint %q: %w", checkpoint, err)
		}
	}
	return p, true, nil
}

// isBinlogCheckpoint reports whether checkpoint was written in binlog
// mode (poll mode then reads the table whole once).
func isBinlogCheckpoint(checkpoint string) bool {
	_, ok, err := parseBinlogCheckpoint(checkpoint)
	return ok && err == nil
}

// parseGTIDSet reads a GTID set of the flavor: MariaDB's
// domain-server-sequence list ("0-1-42,1-3-7", one per domain) or
// MySQL's uuid:intervals list ("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-42:50,...").
func parseGTIDSet(flavor, s string) (gomysql.GTIDSet, error) {
	switch flavor {
	case flavorMariaDB:
		for _, g := range strings.Split(s, ",") {
			if g = strings.TrimSpace(g); g != "" && strings.Count(g, "-") != 2 {
				return nil, fmt.Errorf("GTID %q is not domain-server-sequence", g)
			}
		}
	case flavorMySQL:
		for _, g := range strings.Split(s, ",") {
			if g = strings.TrimSpace(g); g != "" && !strings.Contains(g, ":") {
				return nil, fmt.Errorf("GTID set %q is not uuid:interval", g)
			}
		}
	default:
		return nil, fmt.Errorf("GTID flavor %q is not mariadb or mysql", flavor)
	}
	set, err := gomysql.ParseGTIDSet(flavor, s)
	if err != nil {
		return nil, fmt.Errorf("GTID set %q: %w", s, err)
	}
	return set, nil
}

// formatGTIDSet is the set in its canonical form: MariaDB's domains in
// ascending order, MySQL's uuids in lower case and ascending order with
// merged intervals; "" for an empty set.
func formatGTIDSet(flavor string, set gomysql.GTIDSet) string {
	if set == nil || set.IsEmpty() {
		return ""
	}
	s := set.String()
	if flavor != flavorMariaDB {
		return s
	}
	// MariaDB's set prints its domains in map order.
	parts := strings.Split(s, ",")
	domain := func(g string) uint64 {
		d, _ := strconv.ParseUint(g[:max(strings.IndexByte(g, '-'), 0)], 10, 32)
		return d
	}
	for i := 1; i < len(parts); i++ {
		for j := i; j > 0 && domain(parts[j]) < domain(parts[j-1]); j-- {
			parts[j], parts[j-1] = parts[j-1], parts[j]
		}
	}
	return strings.Join(parts, ",")
}

// addGTID returns the set with one more transaction, gtid ("0-1-43", or
// "3e11fa47-...:43"), in canonical form. A MariaDB position holds one
// GTID per replication domain (what @slave_connect_state takes): the
// domain's latest, whichever server wrote it.
func addGTID(flavor, set, gtid string) (string, error) {
	if flavor == flavorMariaDB {
		if _, err := gomysql.ParseMariadbGTID(gtid); err != nil {
			return "", fmt.Errorf("GTID %q: %w", gtid, err)
		}
		var out []string
		d := gtid[:strings.IndexByte(gtid, '-')+1]
		for _, g := range strings.Split(set, ",") {
			if g = strings.TrimSpace(g); g != "" && !strings.HasPrefix(g, d) {
				out = append(out, g)
			}
		}
		s, err := parseGTIDSet(flavor, strings.Join(append(out, gtid), ","))
		if err != nil {
			return "", err
		}
		return formatGTIDSet(flavor, s), nil
	}
	s, err := parseGTIDSet(flavor, set)
	if err != nil {
		return "", err
	}
	if err := s.Update(gtid); err != nil {
		return "", fmt.Errorf("add GTID %q to %q: %w", gtid, set, err)
	}
	return formatGTIDSet(flavor, s), nil
}

// fileSeq splits a binlog file name into its base and sequence number
// (mysql-bin.000042: mysql-bin, 42).
func fileSeq(name string) (string, uint64, bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return name, 0, false
	}
	n, err := strconv.ParseUint(name[i+1:], 10, 64)
	return name[:i], n, err == nil
}

// atOrPast reports whether a is at or past b in one server's binlog;
// false when their files have different bases (another server's).
func (p binlogPos) atOrPast(b binlogPos) bool {
	pb, pn, ok1 := fileSeq(p.File)
	bb, bn, ok2 := fileSeq(b.File)
	if !ok1 || !ok2 || pb != bb {
		return false
	}
	return pn > bn || (pn == bn && p.Pos >= b.Pos)
}
