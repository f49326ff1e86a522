package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/internal/configfile"
	"github.com/syncd-io/syncd/policy"
)

// EditRate is the steady rate of table edits of the edits scenarios.
const EditRate = 50

// patchRoute is the emulator's counter of contact updates.
const patchRoute = "PATCH /v1/contacts/{id}"

// editTable is the table an edits scenario changes: a PostgreSQL one
// (postgres.go) or a MariaDB/MySQL one (mysql.go).
type editTable interface {
	// connector is the connector following the table, its changes read
	// as mode says, and what to drop when the scenario ends.
	connector(mode string) (cc configfile.Connector, cleanup func())
	// setLastName commits one UPDATE of row id's last_name.
	setLastName(ctx context.Context, id int, name string) error
	// setAllLastNames commits one UPDATE setting every row's last_name
	// to 'Tx-' followed by its id.
	setAllLastNames(ctx context.Context) error
	drop()
}

// Edits measures the time from an UPDATE's commit to its contact in the
// workspace holding the new value, while a running `syncd run` follows a
// table of n rows at a steady EditRate edits per second for dur, changes
// read as mode says: "logical" (PostgreSQL's replication stream),
// "binlog" (MariaDB's or MySQL's binary log), "poll" (keyset reads every
// second, the shortest schedule) of db ("postgres" or "mysql").
// Then one transaction updates every row: the time until every contact
// holds its new value, against n / the workspace's configured write rate
// + 2 s, and against the time syncd's PATCHes of that apply took (from
// the first to the last, that is n at the rate it reached) + 2 s.
// Streaming modes have targets; poll mode is measured beside them.
func Edits(ctx context.Context, binary, dir string, n int, dur time.Duration, db, mode string) ([]Figure, error) {
	var (
		table editTable
		err   error
	)
	switch db {
	case "postgres":
		table, err = newPGTable(ctx, PostgresURL(), n)
	case "mysql":
		table, err = newMySQLTable(ctx, MySQLDSN(), n)
	default:
		err = fmt.Errorf("no edits scenario for %q", db)
	}
	if err != nil {
		return nil, err
	}
	defer table.drop()
	const rate = 2000.0
	env, err := NewEnv(binary, dir, rate, 100)
	if err != nil {
		return nil, err
	}
	defer env.Close()
	cc, cleanup := table.connector(mode)
	defer cleanup()
	streaming := mode != "poll"
	cc.Name, cc.Direction, cc.Workers = "bench", policy.ToWorkspace, 8
	cc.Schedule = "@every 1s"
	if streaming {
		cc.Schedule = "@every 1h" // passes started by the change notifier
	}
	f := env.config(cc, configfile.Webhooks{}, "warn")
	cfg := filepath.Join(env.Dir, "syncd.yaml")
	if err := f.Write(cfg); err != nil {
		return nil, err
	}
	if _, err := env.RunOnce(ctx, cfg); err != nil {
		return nil, fmt.Errorf("initial sync: %w", err)
	}
	if got := len(env.Emu.Contacts()); got != n {
		return nil, fmt.Errorf("initial sync made %d contacts, want %d", got, n)
	}
	daemon, err := startChild(ctx, binary, "run", "--config", cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = daemon.terminate(30 * time.Second) }()
	time.Sleep(2 * time.Second) // the start-up pass

	// Steady edits; a watcher reads the workspace every 10 ms.
	var (
		mu        sync.Mutex
		committed = map[string]time.Time{} // last name -> commit
		lastName  = map[int]string{}       // id -> its last edit's name
		latencies []time.Duration
	)
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			now := time.Now()
			contacts := env.Emu.Contacts()
			mu.Lock()
			for _, c := range contacts {
				if c.DefaultFields.LastName == nil {
					continue
				}
				if at, ok := committed[*c.DefaultFields.LastName]; ok {
					latencies = append(latencies, now.Sub(at))
					delete(committed, *c.DefaultFields.LastName)
				}
			}
			mu.Unlock()
		}
	}()
	tick := time.NewTicker(time.Second / EditRate)
	edits := int(dur.Seconds() * EditRate)
	for k := range edits {
		<-tick.C
		id := 1 + rand.IntN(n)
		name := fmt.Sprintf("Edit%d-%d", k, id)
		if err := table.setLastName(ctx, id, name); err != nil {
			tick.Stop()
			close(stop)
			return nil, err
		}
		at := time.Now()
		mu.Lock()
		if prev, ok := lastName[id]; ok {
			delete(committed, prev) // superseded before it was seen: not measured
		}
		lastName[id] = name
		committed[name] = at
		mu.Unlock()
	}
	tick.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		left := len(committed)
		mu.Unlock()
		if left == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	<-watched
	mu.Lock()
	lost := len(committed)
	lat := slices.Clone(latencies)
	mu.Unlock()
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	scn := fmt.Sprintf("edits (%s %s), %d edits/s for %v, %d rows", db, mode, EditRate, dur, n)
	figs := []Figure{
		fig(scn, "commit to contact p50", pct(0.5).Round(time.Millisecond).String(), "<= 500ms (streaming)", !streaming || pct(0.5) <= 500*time.Millisecond),
		fig(scn, "commit to contact p99", pct(0.99).Round(time.Millisecond).String(), "<= 2s (streaming)", !streaming || pct(0.99) <= 2*time.Second),
		fig(scn, "edits not seen within 30 s", fmt.Sprint(lost), "0", lost == 0),
	}

	// One transaction updating every row. Its target is the time the
	// writes themselves take plus 2 s: n at the workspace's configured
	// rate, and n at the PATCH rate syncd reached during this apply (the
	// emulator's PATCHes from the first to the last), which on a loaded
	// machine is far below the configured one.
	before := env.Emu.Stats().Requests[patchRoute]
	if err := table.setAllLastNames(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	target := time.Duration(float64(n)/rate*float64(time.Second)) + 2*time.Second
	var (
		took                  time.Duration
		patches               int
		firstPatch, lastPatch time.Time
	)
	for {
		done := 0
		for _, c := range env.Emu.Contacts() {
			if c.DefaultFields.LastName != nil && strings.HasPrefix(*c.DefaultFields.LastName, "Tx-") {
				done++
			}
		}
		now := time.Now()
		if p := env.Emu.Stats().Requests[patchRoute] - before; p > patches {
			if patches == 0 {
				firstPatch = now
			}
			patches, lastPatch = p, now
		}
		took = now.Sub(start)
		if done == n || took > target+time.Minute {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	writing := lastPatch.Sub(firstPatch)
	achieved := 0.0
	if writing > 0 {
		achieved = float64(patches) / writing.Seconds()
	}
	reached := writing + 2*time.Second
	scn = fmt.Sprintf("one transaction of %d rows (%s %s), workspace at %.0f writes/s", n, db, mode, rate)
	figs = append(figs,
		fig(scn, "commit to every contact written, against the configured rate", took.Round(10*time.Millisecond).String(),
			fmt.Sprintf("<= %d / %.0f + 2 s = %v (streaming)", n, rate, target), !streaming || took <= target),
		fig(scn, "PATCHes syncd sent during the apply, first to last", fmt.Sprintf("%d in %v (%.0f/s)", patches, writing.Round(10*time.Millisecond), achieved), "", true),
		fig(scn, "commit to every contact written, against the rate reached", took.Round(10*time.Millisecond).String(),
			fmt.Sprintf("<= %d / %.0f + 2 s = %v (streaming)", patches, achieved, reached.Round(10*time.Millisecond)),
			!streaming || (patches > 0 && took <= reached)))
	return figs, nil
}
