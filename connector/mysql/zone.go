package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/syncd-io/syncd/internal/logfield"
)

// The zones of a table's times. TIMESTAMP values are instants: the read
// session, at +00:00, reads and compares them as UTC. DATETIME (and DATE)
// values carry no zone: they are in the zone of whatever wrote them, and
// a DEFAULT or ON UPDATE CURRENT_TIMESTAMP (or a trigger's NOW()) writes
// the local time of the writing session's time_zone. Applications' sessions
// take the server's global time_zone, so syncd's writes run in a session
// of the zone DATETIME values are in (timeZone, by default the server's
// global zone): its own write-back then stamps a cursor in the same zone
// as the application's edits, and the checkpoint never passes over them.

// serverZone is the server's global time zone, the zone applications'
// sessions take unless they set their own.
type serverZone struct {
	// global is @@global.time_zone: SYSTEM, an offset (+09:00) or a
	// name (Europe/Berlin, with the server's time zone tables).
	global string
	// system is @@system_time_zone, the host's zone that SYSTEM means,
	// as the host names it (UTC, CET, PDT).
	system string
	// offset is the global zone's offset from UTC now.
	offset time.Duration
}

// serverZoneQuery reads the global zone and its offset now (CONVERT_TZ
// takes SYSTEM and offsets without time zone tables).
const serverZoneQuery = `SELECT @@global.time_zone, @@system_time_zone,
TIMESTAMPDIFF(SECOND, UTC_TIMESTAMP(), CONVERT_TZ(UTC_TIMESTAMP(), '+00:00', @@global.time_zone))`

func readServerZone(ctx context.Context, db *sql.DB) (serverZone, error) {
	var z serverZone
	var off sql.NullInt64
	if err := db.QueryRowContext(ctx, serverZoneQuery).Scan(&z.global, &z.system, &off); err != nil {
		return z, fmt.Errorf("server time zone: %w", err)
	}
	z.offset = time.Duration(off.Int64) * time.Second
	return z, nil
}

// String names the zone as the server does: "-07:00", "Europe/Berlin",
// "SYSTEM (CET)".
func (z serverZone) String() string {
	if strings.EqualFold(z.global, "SYSTEM") {
		return "SYSTEM (" + z.system + ")"
	}
	return z.global
}

// location is the zone as a Go location, and whether it is exact: an
// offset, or a name Go knows with the server's offset now. A host zone
// named by its abbreviation (PDT, EST) is only its offset now: exact
// reports false, and timeZone should name it.
func (z serverZone) location() (loc *time.Location, exact bool) {
	if loc, ok := parseOffset(z.global); ok {
		return loc, true
	}
	name := z.global
	if strings.EqualFold(name, "SYSTEM") {
		name = z.system
		switch strings.ToUpper(name) {
		case "UTC", "GMT", "UCT", "ZULU", "UNIVERSAL":
		default:
			if !strings.Contains(name, "/") {
				name = "" // an abbreviation: CET, EST, PDT
			}
		}
	}
	if name != "" && name != "Local" {
		if loc, err := time.LoadLocation(name); err == nil && offsetAt(loc, time.Now()) == z.offset {
			return loc, true
		}
	}
	return time.FixedZone(z.String(), int(z.offset/time.Second)), false
}

// parseOffset reads a fixed offset as MySQL writes it: +09:00, -07:00.
func parseOffset(s string) (*time.Location, bool) {
	if len(s) < 5 || (s[0] != '+' && s[0] != '-') {
		return nil, false
	}
	var h, m int
	if n, err := fmt.Sscanf(s[1:], "%d:%d", &h, &m); err != nil || n != 2 || h > 14 || m > 59 {
		return nil, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return time.FixedZone(formatOffset(time.Duration(off)*time.Second), off), true
}

// formatOffset writes an offset as MySQL's time_zone takes it: +09:00.
func formatOffset(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	return fmt.Sprintf("%s%02d:%02d", sign, int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// offsetAt is loc's offset from UTC at t.
func offsetAt(loc *time.Location, t time.Time) time.Duration {
	_, off := t.In(loc).Zone()
	return time.Duration(off) * time.Second
}

// fixedOffset reports whether loc keeps one offset (no daylight saving)
// over the coming year, and which.
func fixedOffset(loc *time.Location, now time.Time) (time.Duration, bool) {
	off := offsetAt(loc, now)
	for m := 1; m <= 12; m++ {
		if offsetAt(loc, now.AddDate(0, m, 0)) != off {
			return 0, false
		}
	}
	return off, true
}

// zone is where a table's DATETIME values are, and how syncd's write
// session stamps them.
type zone struct {
	// loc is the zone DATETIME values are read and written in.
	loc *time.Location
	// given is true when the timeZone setting names loc; otherwise it
	// is the server's global zone.
	given bool
	// exact is false when loc is only the server zone's offset now (a
	// host zone named by abbreviation).
	exact bool
	// session is the write session's time_zone, as SET takes it
	// ('+09:00', 'SYSTEM', 'Europe/Berlin'); "" when loc has no name the
	// server knows and changes offset: each connection then takes its
	// offset when it opens (dynamic).
	session string
	server  serverZone
}

// utc reports whether the write session stamps as the read session.
func (z zone) utc() bool { return z.session == "+00:00" }

// resolveZone finds the zone of DATETIME values: the timeZone setting
// when given (nil loc otherwise), else the server's global zone.
func resolveZone(ctx context.Context, db *sql.DB, given *time.Location) (zone, error) {
	server, err := readServerZone(ctx, db)
	if err != nil {
		return zone{}, err
	}
	z := zone{server: server, exact: true}
	if given == nil {
		z.loc, z.exact = server.location()
		z.session = server.global
		if off, ok := fixedOffset(z.loc, time.Now()); ok && z.exact {
			z.session = formatOffset(off)
		}
		return z, nil
	}
	z.loc, z.given = given, true
	if off, ok := fixedOffset(given, time.Now()); ok {
		z.session = formatOffset(off)
		return z, nil
	}
	var known bool
	if err := db.QueryRowContext(ctx, "SELECT CONVERT_TZ('2000-01-01 00:00:00', '+00:00', ?) IS NOT NULL", given.String()).Scan(&known); err != nil {
		return zone{}, fmt.Errorf("server time zone %s: %w", given, err)
	}
	if known {
		z.session = given.String()
	}
	return z, nil
}

// sessionParams has the write session take the zone: a name or offset
// as such; a zone with daylight saving the server has no tables for,
// the offset it has when each connection opens (connections then live
// a few minutes, so that a change of offset is taken soon).
func (z zone) sessionParams(cfg *mysql.Config) (maxLifetime time.Duration, err error) {
	if z.session != "" {
		cfg.Params["time_zone"] = "'" + strings.ReplaceAll(z.session, "'", "''") + "'"
		return 0, nil
	}
	loc := z.loc
	err = cfg.Apply(mysql.BeforeConnect(func(_ context.Context, c *mysql.Config) error {
		c.Params["time_zone"] = "'" + formatOffset(offsetAt(loc, time.Now())) + "'"
		return nil
	}))
	return 5 * time.Minute, err
}

// differs reports whether the zone's offsets differ from the server's
// global zone now or in the coming year: applications' sessions then
// stamp DATETIME values in another zone than loc, unless they set their
// own.
func (z zone) differs() bool {
	if !z.given {
		return false
	}
	sloc, exact := z.server.location()
	now := time.Now()
	if !exact {
		return offsetAt(z.loc, now) != z.server.offset
	}
	for m := 0; m <= 12; m++ {
		t := now.AddDate(0, m, 0)
		if offsetAt(z.loc, t) != offsetAt(sloc, t) {
			return true
		}
	}
	return false
}

// wallBound is the latest wall-clock text in loc a cursor checkpoint may
// hold for rows stamped at instant at or later: at's local time, or,
// when loc's clocks go back in the hours after at (daylight saving
// ends), that time at the later, smaller offset, so that the rows the
// repeated hour stamps are not passed over.
func wallBound(loc *time.Location, at time.Time) string {
	off := offsetAt(loc, at)
	if later := offsetAt(loc, at.Add(3*time.Hour)); later < off {
		off = later
	}
	return at.UTC().Add(off).Format(cursorText)
}

// hasLocalTimes reports whether the table has DATETIME or DATE columns,
// whose stamps depend on the writing session's zone.
func (t *table) hasLocalTimes() bool {
	for _, c := range t.columns {
		if c.kind == kindDatetime || c.kind == kindDate {
			return true
		}
	}
	return false
}

// describe names the zone and where it comes from.
func (z zone) describe() string {
	if z.given {
		return z.loc.String() + " (the timeZone setting)"
	}
	return z.loc.String() + " (the server's time_zone " + z.server.String() + ")"
}

// checkZone notes (for `syncd validate`) and logs the zone DATETIME
// columns are taken in, and says when it looks wrong: timeZone differs
// from the server's zone, the server's zone is known only by its offset
// now, or the DATETIME cursor holds times ahead of the server's clock in
// that zone (they were stamped in a zone east of it).
func (s *Source) checkZone(ctx context.Context) error {
	var datetimes []string
	for _, c := range append([]column{s.tbl.updated}, s.tbl.fetch...) {
		if c.kind == kindDatetime && !slices.Contains(datetimes, c.name) {
			datetimes = append(datetimes, c.name)
		}
	}
	if len(datetimes) == 0 {
		return nil
	}
	z := s.zone
	notes := []string{fmt.Sprintf("DATETIME columns %s carry no time zone: read and written as %s",
		strings.Join(datetimes, ", "), z.describe())}
	if z.differs() {
		notes = append(notes, fmt.Sprintf("timeZone %s differs from the server's time_zone %s, the zone DEFAULT and ON UPDATE CURRENT_TIMESTAMP stamp in for sessions that set none: unset timeZone unless the applications' sessions set %s themselves", z.loc, z.server, z.loc))
	}
	if !z.exact {
		notes = append(notes, fmt.Sprintf("the server's time_zone %s is known here only by its offset now (%s): set timeZone to its IANA name (such as America/Los_Angeles) so that times read right across daylight saving changes", z.server, formatOffset(z.server.offset)))
	}
	ahead, err := s.cursorAhead(ctx)
	if err != nil {
		return err
	}
	if ahead != "" {
		notes = append(notes, ahead)
	}
	s.zoneNote = strings.Join(notes, "; ")
	log := s.log.WithField(logfield.TimeZone, z.loc.String())
	if len(notes) > 1 {
		log.WithField(logfield.Reason, strings.Join(notes[1:], "; ")).Warn("mysql DATETIME columns may be read in the wrong time zone")
	} else {
		log.Info("mysql DATETIME columns are read and written in this zone")
	}
	return nil
}

// cursorAhead says, for a DATETIME or DATE cursor, when its latest value
// is later than the server's clock in the zone (by more than a minute):
// rows were stamped in a zone east of it, and a checkpoint taken from
// them would pass over the edits stamped in the zone.
func (s *Source) cursorAhead(ctx context.Context) (string, error) {
	u := s.tbl.updated
	if u.kind != kindDatetime && u.kind != kindDate {
		return "", nil
	}
	var latest sql.NullString
	var now string
	q := "SELECT DATE_FORMAT(MAX(" + u.ident + "), " + cursorFormat + "), DATE_FORMAT(UTC_TIMESTAMP(6), " + cursorFormat + ") FROM " + s.tbl.name
	if err := s.db.QueryRowContext(ctx, q).Scan(&latest, &now); err != nil {
		return "", fmt.Errorf("read %s: latest %s: %w", s.tbl.name, u.name, err)
	}
	tm, err := time.ParseInLocation(cursorText, now, time.UTC)
	if err != nil {
		return "", fmt.Errorf("read %s: server clock %q: %w", s.tbl.name, now, err)
	}
	local := tm.In(s.zone.loc).Format(cursorText)
	if !latest.Valid || latest.String <= tm.Add(time.Minute).In(s.zone.loc).Format(cursorText) {
		return "", nil
	}
	return fmt.Sprintf("%s holds %s, later than the server's clock in %s (%s): rows were stamped in a zone east of it (by sessions with another time_zone, or by syncd before it wrote in the server's zone); set timeZone to the zone the applications write in",
		u.name, strings.TrimSuffix(latest.String, ".000000"), s.zone.loc, strings.TrimSuffix(local, ".000000")), nil
}
