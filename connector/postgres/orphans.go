package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/syncd-io/syncd/connector/sqlkit"
)

// Orphaned slots. A connector's slot (syncd_<name> unless slot: names
// another) and the publication syncd created with it (named like the
// slot) stay on the server when the connector is removed from the
// configuration or renamed, and the slot holds WAL until the disk fills.
// FindOrphans looks, on the database of each configured postgres
// connector, for the slots and publications whose name contains "syncd"
// (every slot syncd makes does, see validateLogical) that no configured
// connector streams from: those of a removed or renamed connector, or of
// one now set to changes: poll. Another syncd sharing the database with
// its own configuration would see this one's slots too, so they are
// reported, never dropped by themselves.

// Configured is a configured postgres connector: its name and settings.
type Configured struct {
	Name     string
	Settings *Settings
}

// Orphan is a slot of syncd's, or a publication, that no configured
// connector uses, on one database; a slot and the publication named like
// it are one orphan.
type Orphan struct {
	// Database is the server and database, host:port/dbname (no
	// credentials).
	Database string
	// Slot and Publication name what exists; either may be "".
	Slot, Publication string
	// HeldBytes is the WAL the slot keeps the server from removing
	// (from its restart position); 0 without a slot.
	HeldBytes int64
	// Active is true while a process streams from the slot.
	Active bool
	// WALStatus is pg_replication_slots.wal_status (reserved, extended,
	// unreserved, lost).
	WALStatus string
}

// Name is the slot's name, or the publication's without a slot.
func (o Orphan) Name() string {
	if o.Slot != "" {
		return o.Slot
	}
	return o.Publication
}

// uses returns the slot and publication a connector streams through;
// both "" when it polls. A publication a DBA named is claimed even when
// the connector polls: it is not syncd's.
func uses(c Configured) (slot, publication string) {
	st := c.Settings
	if st.Changes == ChangesPoll {
		return "", st.Publication
	}
	slot = st.Slot
	if slot == "" {
		slot = DefaultSlot(c.Name)
	}
	publication = st.Publication
	if publication == "" {
		publication = slot
	}
	return slot, publication
}

// Uses reports whether the connector streams through the slot or
// publication named name.
func (c Configured) Uses(name string) bool {
	slot, pub := uses(c)
	return name != "" && (name == slot || name == pub)
}

// DatabaseOf names the database a dsn connects to, host:port/dbname,
// for grouping connectors and for messages.
func DatabaseOf(dsn string) (string, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "", fmt.Errorf("dsn: %w", newRedactor(dsn).redact(err))
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))) + "/" + cfg.Database, nil
}

const orphanSlotsQuery = `SELECT slot_name::text, active, COALESCE(wal_status, ''),
	COALESCE(pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_receive_lsn() ELSE pg_current_wal_lsn() END, restart_lsn), 0)::bigint
FROM pg_replication_slots
WHERE slot_type = 'logical' AND database = current_database() AND strpos(slot_name::text, 'syncd') > 0`

const orphanPublicationsQuery = `SELECT pubname::text FROM pg_publication WHERE strpos(pubname::text, 'syncd') > 0`

// FindOrphans returns the orphans on the databases of the connectors
// (see above), by database and name. A database it cannot read is an
// error naming it; the others are still looked at.
func FindOrphans(ctx context.Context, conns []Configured) ([]Orphan, error) {
	type database struct {
		dsn    string
		claims map[string]bool
	}
	dbs := map[string]*database{}
	var order []string
	var errs []error
	for _, c := range conns {
		key, err := DatabaseOf(c.Settings.DSN)
		if err != nil {
			errs = append(errs, fmt.Errorf("connector %s: %w", c.Name, err))
			continue
		}
		db, ok := dbs[key]
		if !ok {
			db = &database{dsn: c.Settings.DSN, claims: map[string]bool{}}
			dbs[key] = db
			order = append(order, key)
		}
		slot, pub := uses(c)
		if slot != "" {
			db.claims["slot:"+slot] = true
		}
		if pub != "" {
			db.claims["publication:"+pub] = true
		}
	}
	var out []Orphan
	for _, key := range order {
		db := dbs[key]
		found, err := orphansOn(ctx, key, db.dsn, db.claims)
		if err != nil {
			errs = append(errs, fmt.Errorf("look for orphaned replication slots on %s: %w", key, err))
		}
		out = append(out, found...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Database != out[j].Database {
			return out[i].Database < out[j].Database
		}
		return out[i].Name() < out[j].Name()
	})
	return out, errors.Join(errs...)
}

// orphansOn lists the slots and publications of syncd's on one database
// that claims lacks.
func orphansOn(ctx context.Context, key, dsn string, claims map[string]bool) ([]Orphan, error) {
	red := newRedactor(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, red.redact(err)
	}
	red.add(cfg.Password)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, red.redact(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	byName := map[string]*Orphan{}
	rows, err := conn.Query(ctx, orphanSlotsQuery)
	if err != nil {
		return nil, red.redact(err)
	}
	for rows.Next() {
		o := Orphan{Database: key}
		if err := rows.Scan(&o.Slot, &o.Active, &o.WALStatus, &o.HeldBytes); err != nil {
			rows.Close()
			return nil, red.redact(err)
		}
		if !claims["slot:"+o.Slot] {
			byName[o.Slot] = &o
		}
	}
	if err := rows.Err(); err != nil {
		return nil, red.redact(err)
	}
	rows, err = conn.Query(ctx, orphanPublicationsQuery)
	if err != nil {
		return nil, red.redact(err)
	}
	for rows.Next() {
		var pub string
		if err := rows.Scan(&pub); err != nil {
			rows.Close()
			return nil, red.redact(err)
		}
		if claims["publication:"+pub] {
			continue
		}
		if o, ok := byName[pub]; ok {
			o.Publication = pub
		} else {
			byName[pub] = &Orphan{Database: key, Publication: pub}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, red.redact(err)
	}
	out := make([]Orphan, 0, len(byName))
	for _, o := range byName {
		out = append(out, *o)
	}
	return out, nil
}

// DropOrphan drops, on the database of dsn, the slot named name and the
// publication of that name (syncd names its publication like its slot),
// whichever exist: for a slot whose connector is gone from the
// configuration. The name must contain "syncd" (syncd's own). It returns
// what it dropped. A slot in use is an error.
func DropOrphan(ctx context.Context, dsn, name string) (dropped []string, err error) {
	if !strings.Contains(name, "syncd") {
		return nil, fmt.Errorf("%q is not a slot of syncd's (its name lacks \"syncd\")", name)
	}
	return dropNamed(ctx, dsn, name, name)
}

// dropNamed drops, on the database of dsn, the slot named slot and, when
// publication is not "", that publication, whichever exist, and returns
// what it dropped. A slot in use is an error.
func dropNamed(ctx context.Context, dsn, slot, publication string) (dropped []string, err error) {
	red := newRedactor(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("dsn: %w", red.redact(err))
	}
	red.add(cfg.Password)
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, red.redact(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tag, err := conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
		WHERE slot_name = $1 AND database = current_database()`, slot)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55006" {
		return nil, fmt.Errorf("slot %s is in use: stop syncd (or the process streaming from it) first", slot)
	}
	if err != nil {
		return nil, fmt.Errorf("drop slot %s: %w", slot, red.redact(err))
	}
	if tag.RowsAffected() > 0 {
		dropped = append(dropped, "replication slot "+slot)
	}
	if publication == "" {
		return dropped, nil
	}
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, publication).Scan(&exists); err != nil {
		return dropped, fmt.Errorf("find publication %s: %w", publication, red.redact(err))
	}
	if exists {
		if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{publication}.Sanitize()); err != nil {
			return dropped, fmt.Errorf("drop publication %s: %w", publication, red.redact(err))
		}
		dropped = append(dropped, "publication "+publication)
	}
	return dropped, nil
}

// Held writes the WAL the slot holds as 980 B, 12 kB or 3.4 MB.
func (o Orphan) Held() string { return sqlkit.ByteSize(o.HeldBytes) }
