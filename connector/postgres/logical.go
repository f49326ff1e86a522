package postgres

// Logical replication (changes: logical, or auto when the server allows
// it). The table's changes come from a replication slot through the
// pgoutput plugin and a publication of the table, on a replication
// connection (replication=database) opened with the dsn's settings:
//
//   - The first pass (an empty checkpoint, or one of poll mode) creates
//     the slot with an exported snapshot and reads the table in that
//     snapshot, then streams from the slot's consistent point: a change is
//     either in the snapshot or in the stream, never in both or neither.
//   - A pass streams from the checkpoint's LSN until it has caught up with
//     the WAL flushed when it began. Records come in commit order, in
//     batches of batchSize (a large transaction in several); a batch's
//     checkpoint is the end of the last transaction it completes.
//   - The slot's confirmed position (standby status update) moves only
//     after the batch function returned, that is after the reconciler
//     stored the batch's checkpoint: a crash replays from the checkpoint,
//     and replayed records are recognised by their hash.
//   - A slot that is gone or invalidated (wal_status lost) is recreated
//     and the connector resynced (connector.ErrResyncNeeded), so that what
//     the lost WAL held, hard deletes included, is not silently missed.

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// Change modes (the changes setting).
const (
	ChangesAuto    = "auto"
	ChangesLogical = "logical"
	ChangesPoll    = "poll"
	// DefaultChanges is auto: a table streams when the server allows it
	// and polls, with a note saying why, when it does not.
	DefaultChanges = ChangesAuto
)

// slotName is what PostgreSQL accepts as a replication slot name.
var slotName = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func (s *Settings) validateLogical() []error {
	var errs []error
	switch s.Changes {
	case ChangesAuto, ChangesLogical, ChangesPoll, "":
	default:
		errs = append(errs, fmt.Errorf("changes: %q is not auto, logical or poll", s.Changes))
	}
	if s.Slot != "" {
		if !slotName.MatchString(s.Slot) {
			errs = append(errs, fmt.Errorf("slot: %q is not a slot name (lower-case letters, digits and _, at most 63)", s.Slot))
		} else if !strings.Contains(s.Slot, "syncd") {
			errs = append(errs, fmt.Errorf("slot: %q must contain \"syncd\", so that its owner is plain on the server", s.Slot))
		}
	}
	if s.Publication != "" && strings.TrimSpace(s.Publication) != s.Publication {
		errs = append(errs, fmt.Errorf("publication: %q has surrounding spaces", s.Publication))
	}
	return errs
}

// DefaultSlot is the slot of a connector named name: syncd_ and the
// name, lower-cased, with every other character than a letter, digit or
// _ replaced by _.
func DefaultSlot(name string) string {
	var b strings.Builder
	b.WriteString("syncd_")
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	if len(out) > 63 {
		out = out[:63]
	}
	return out
}

// logicalState is what a source in logical mode keeps between passes.
type logicalState struct {
	slot, publication string
	// replConfig connects replication connections.
	replConfig *pgconn.Config

	mu sync.Mutex
	// reached is the WAL position the last pass caught up with.
	reached pglogrepl.LSN
	// recreated is the consistent point of a slot this source created in
	// Snapshot: a checkpoint older than it is expected, not a loss.
	recreated pglogrepl.LSN
	// lag is the WAL the slot holds past its confirmed position, in
	// bytes, as last seen (lagSeen).
	lag     int64
	lagSeen bool
}

// chooseMode applies the changes setting: logical when asked (failing
// when the server does not allow it), logical or poll for auto.
func (s *Source) chooseMode(ctx context.Context, st *Settings, name string) error {
	if st.Changes == ChangesPoll {
		return nil
	}
	l := &logicalState{slot: st.Slot, publication: st.Publication}
	if l.slot == "" {
		l.slot = DefaultSlot(name)
	}
	if l.publication == "" {
		l.publication = l.slot
	}
	reason, err := s.logicalBlocker(ctx, l, st.Publication != "")
	if err != nil {
		return fmt.Errorf("changes: check logical replication: %w", err)
	}
	if reason != "" {
		if st.Changes == ChangesLogical {
			return fmt.Errorf("changes: logical: %s", reason)
		}
		s.modeNote = "changes: auto polls: " + reason
		s.log.WithField(logfield.Reason, reason).Warn("logical replication not available; polling instead")
		return nil
	}
	if st.Publication == "" {
		if err := s.ensurePublication(ctx, l.publication); err != nil {
			if st.Changes == ChangesLogical {
				return fmt.Errorf("publication: %w", err)
			}
			s.modeNote = "changes: auto polls: " + err.Error()
			s.log.WithError(err).Warn("logical replication not available; polling instead")
			return nil
		}
	}
	cfg := s.pool.Config().ConnConfig.Config.Copy()
	cfg.RuntimeParams["replication"] = "database"
	l.replConfig = cfg
	s.logical = l
	s.log = s.log.WithField(logfield.Slot, l.slot)
	return nil
}

// ModeNote says why a connector set to changes: auto polls, with what to
// change; empty when it streams or was set to poll. syncd validate shows
// it.
func (s *Source) ModeNote() string { return s.modeNote }

// Mode describes how changes are read, for logs and status pages.
func (s *Source) Mode() string {
	if s.logical == nil {
		return "poll"
	}
	return "logical, slot " + s.logical.slot
}

const blockerQuery = `SELECT current_setting('wal_level'),
	r.rolreplication OR r.rolsuper,
	COALESCE((SELECT i.indisprimary OR c.relreplident = 'f'
		FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary), c.relreplident = 'f'),
	c.relreplident::text
FROM pg_roles r, pg_class c WHERE r.rolname = current_user AND c.oid = $1`

// logicalBlocker says what keeps logical replication from working for
// this table, with what to change, or "" when nothing does.
func (s *Source) logicalBlocker(ctx context.Context, l *logicalState, named bool) (string, error) {
	if s.tbl.relkind != "r" && s.tbl.relkind != "p" {
		return fmt.Sprintf("%s is a view or foreign table, which logical replication cannot read; keep changes: poll", s.tbl.name), nil
	}
	var (
		walLevel, identity string
		mayReplicate, key  bool
	)
	if err := s.pool.QueryRow(ctx, blockerQuery, s.tbl.oid).Scan(&walLevel, &mayReplicate, &key, &identity); err != nil {
		return "", err
	}
	if reason := serverBlocker(s.tbl.name, s.tbl.id.name, walLevel, mayReplicate, key, identity); reason != "" {
		return reason, nil
	}
	var exists, includes bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1),
		EXISTS (SELECT 1 FROM pg_publication_rel pr JOIN pg_publication p ON p.oid = pr.prpubid WHERE p.pubname = $1 AND pr.prrelid = $2)
		OR EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1 AND puballtables)`, l.publication, s.tbl.oid).Scan(&exists, &includes)
	if err != nil {
		return "", err
	}
	switch {
	case named && !exists:
		return fmt.Sprintf("publication %q does not exist: CREATE PUBLICATION %s FOR TABLE %s", l.publication, pgx.Identifier{l.publication}.Sanitize(), s.tbl.name), nil
	case exists && !includes:
		return fmt.Sprintf("publication %q does not include %s: ALTER PUBLICATION %s ADD TABLE %s", l.publication, s.tbl.name, pgx.Identifier{l.publication}.Sanitize(), s.tbl.name), nil
	}
	return "", nil
}

// serverBlocker says what in the server's settings, the role or the
// table keeps logical replication from reading table (whose primary key
// column is idColumn), with what to change, or "" when nothing does.
func serverBlocker(table, idColumn, walLevel string, mayReplicate, key bool, identity string) string {
	switch {
	case walLevel != "logical":
		return fmt.Sprintf("the server's wal_level is %s: set it with ALTER SYSTEM SET wal_level = logical and restart PostgreSQL", walLevel)
	case !mayReplicate:
		return "the role may not replicate: ALTER ROLE <role> REPLICATION (or, on a managed service, grant its replication role)"
	case !key:
		return fmt.Sprintf("%s has no primary key, so deletes carry no id: add one on %s, or ALTER TABLE %s REPLICA IDENTITY FULL", table, idColumn, table)
	case identity == "n":
		return fmt.Sprintf("%s has REPLICA IDENTITY NOTHING: ALTER TABLE %s REPLICA IDENTITY DEFAULT", table, table)
	}
	return ""
}

// ensurePublication creates the publication of the table unless it
// exists.
func (s *Source) ensurePublication(ctx context.Context, name string) error {
	var exists bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, name).Scan(&exists); err != nil {
		return err
	}
	if exists {
		return nil
	}
	_, err := s.pool.Exec(ctx, "CREATE PUBLICATION "+pgx.Identifier{name}.Sanitize()+" FOR TABLE "+s.tbl.name)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42710" { // duplicate_object: created meanwhile
		return nil
	}
	if err != nil {
		return fmt.Errorf("create publication %s: %w (a DBA may create it: CREATE PUBLICATION %s FOR TABLE %s, and name it in publication)",
			name, err, pgx.Identifier{name}.Sanitize(), s.tbl.name)
	}
	return nil
}

// slotInfo is a replication slot as pg_replication_slots shows it.
type slotInfo struct {
	exists    bool
	lost      bool
	active    bool
	confirmed pglogrepl.LSN
	plugin    string
}

func (s *Source) slot(ctx context.Context) (slotInfo, error) {
	var (
		si        slotInfo
		confirmed *string
		status    *string
	)
	err := s.pool.QueryRow(ctx, `SELECT confirmed_flush_lsn::text, wal_status, active, COALESCE(plugin, '')
		FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()`, s.logical.slot).
		Scan(&confirmed, &status, &si.active, &si.plugin)
	if errors.Is(err, pgx.ErrNoRows) {
		return si, nil
	}
	if err != nil {
		return si, fmt.Errorf("read slot %s: %w", s.logical.slot, err)
	}
	si.exists = true
	si.lost = (status != nil && *status == "lost") || confirmed == nil
	if confirmed != nil {
		if si.confirmed, err = pglogrepl.ParseLSN(*confirmed); err != nil {
			return si, fmt.Errorf("read slot %s: %w", s.logical.slot, err)
		}
	}
	return si, nil
}

// replConn opens a replication connection.
func (s *Source) replConn(ctx context.Context) (*pgconn.PgConn, error) {
	conn, err := pgconn.ConnectConfig(ctx, s.logical.replConfig)
	if err != nil {
		return nil, fmt.Errorf("replication connection: %w", s.red.redact(err))
	}
	return conn, nil
}

// dropSlot drops the slot when it exists (ours: its name contains syncd).
func (s *Source) dropSlot(ctx context.Context) error {
	for wait := time.Now(); ; {
		_, err := s.pool.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
			WHERE slot_name = $1 AND database = current_database()`, s.logical.slot)
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "55006" && time.Since(wait) < slotRelease {
			// object_in_use: the walsender of a closed connection is ending.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("drop slot %s: %w", s.logical.slot, err)
		}
		return nil
	}
}

// createSlot (re)creates the slot with an exported snapshot and reads
// every live row in it, delivering batches without checkpoints; it
// returns the slot's consistent point, from which the stream continues.
func (s *Source) createSlot(ctx context.Context, fn connector.BatchFunc) (pglogrepl.LSN, error) {
	if err := s.dropSlot(ctx); err != nil {
		return 0, err
	}
	conn, err := s.replConn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, s.logical.slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		return 0, fmt.Errorf("create slot %s: %w", s.logical.slot, s.red.redact(err))
	}
	start, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return 0, fmt.Errorf("create slot %s: %w", s.logical.slot, err)
	}
	s.log.WithField(logfield.Lsn, start.String()).Info("replication slot created; reading the table in its snapshot")
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, s.readError(ctx, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(res.SnapshotName)); err != nil {
		return 0, s.readError(ctx, err)
	}
	if err := s.snapshotOn(ctx, tx, fn); err != nil {
		return 0, err
	}
	return start, nil
}

func quoteLiteral(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }

// logicalSnapshot reads every live row. When the slot is gone or lost it
// is created again and the table read in its snapshot, so that the
// stream goes on exactly from the state read (a resync after a lost
// slot); otherwise the table is read as it is now (what the slot streams
// next overlaps, which is harmless).
func (s *Source) logicalSnapshot(ctx context.Context, fn connector.BatchFunc) error {
	si, err := s.slot(ctx)
	if err != nil {
		return err
	}
	if si.exists && !si.lost {
		return s.snapshotOn(ctx, s.pool, fn)
	}
	start, err := s.createSlot(ctx, fn)
	if err != nil {
		return err
	}
	s.logical.mu.Lock()
	s.logical.recreated = start
	s.logical.mu.Unlock()
	return nil
}

// DropReplication drops the replication slot of the connector named name
// and, unless a DBA named it in the publication setting, its publication:
// for a connector being removed, so that the slot holds no more WAL. It
// returns what it dropped. A slot in use (syncd still running) is an
// error.
func DropReplication(ctx context.Context, st *Settings, name string) (dropped []string, err error) {
	slot := st.Slot
	if slot == "" {
		slot = DefaultSlot(name)
	}
	publication := ""
	if st.Publication == "" {
		publication = slot
	}
	return dropNamed(ctx, st.DSN, slot, publication)
}
