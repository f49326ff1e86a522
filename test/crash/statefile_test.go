package crash

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// TestDamagedStateFile damages copies of a real state file (cut short at
// random offsets, bytes flipped at random places, the two header pages
// included) and runs `syncd run --once` on each, the workspace already
// holding every contact: syncd either refuses the file, exiting non-zero
// with a message naming it and without a crash dump, or opens it and
// creates no contact (its look-up by externalId finds them all, whatever
// links were lost). Never a duplicate.
func TestDamagedStateFile(t *testing.T) {
	rng := rand.New(rand.NewSource(*seed + 3000))
	const rows = 300
	table := e2e.NewTable(t)
	table.InsertN(rows, func(i int) e2e.Values { return row(i, "") })
	emu := emulator.NewServer(emulator.Options{Rate: -1, Seed: *seed})
	t.Cleanup(emu.Close)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	cfg := e2e.WriteConfig(t, dir, e2e.ConfigOptions{
		EmulatorURL: emu.URL, Table: table.Name, StatePath: good, Direction: "to-workspace", LogLevel: "warn", RateLimit: 1000, Burst: 50,
	})
	runOK(t, time.Minute, "run", "--once", "--config", cfg)
	if n := len(emu.Contacts()); n != rows {
		t.Fatalf("initial sync: %d contacts", n)
	}
	orig, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	pageSize, used := boltPages(t, orig)
	t.Logf("state file of %d bytes, %d pages of %d bytes in use, %d links", len(orig), used, pageSize, rows)

	type damage struct {
		name string
		data []byte
	}
	var cases []damage
	for range 12 {
		n := rng.Intn(len(orig))
		cases = append(cases, damage{fmt.Sprintf("cut to %d bytes", n), append([]byte(nil), orig[:n]...)})
	}
	for range 6 { // cut at a page boundary among the pages in use
		n := pageSize * (2 + rng.Intn(used-2))
		cases = append(cases, damage{fmt.Sprintf("cut to %d whole pages", n/pageSize), append([]byte(nil), orig[:n]...)})
	}
	flip := func(name string, offsets ...int) {
		b := append([]byte(nil), orig...)
		for _, o := range offsets {
			b[o] ^= byte(1 + rng.Intn(255))
		}
		cases = append(cases, damage{name, b})
	}
	for range 4 {
		o := rng.Intn(pageSize)
		flip(fmt.Sprintf("byte %d of header page 0 flipped", o), o)
	}
	for range 4 {
		o := 16 + rng.Intn(64)
		flip(fmt.Sprintf("meta field byte %d of both header pages flipped", o), o, pageSize+o)
	}
	inUse := func() int { return 2*pageSize + rng.Intn((used-2)*pageSize) }
	for range 12 {
		o := inUse()
		flip(fmt.Sprintf("byte %d (page %d of %d in use) flipped", o, o/pageSize, used), o)
	}
	for range 4 {
		var offs []int
		for range 16 {
			offs = append(offs, inUse())
		}
		flip("16 bytes of the pages in use flipped", offs...)
	}

	refused, opened := 0, 0
	for i, c := range cases {
		path := filepath.Join(dir, fmt.Sprintf("damaged-%02d.db", i))
		if err := os.WriteFile(path, c.data, 0o600); err != nil {
			t.Fatal(err)
		}
		ccfg := e2e.WriteConfig(t, t.TempDir(), e2e.ConfigOptions{
			EmulatorURL: emu.URL, Table: table.Name, StatePath: path, Direction: "to-workspace", LogLevel: "warn", RateLimit: 1000, Burst: 50,
		})
		before := emu.Stats()
		p := start(t, "run", "--once", "--config", ccfg)
		err := waitOrDump(t, p, time.Minute, c.name)
		out := p.Out.String()
		posts := emu.Stats().Requests["POST /v1/contacts"] - before.Requests["POST /v1/contacts"]
		var exit *exec.ExitError
		switch {
		case err == nil:
			opened++
			if posts != 0 {
				t.Errorf("%s: opened, and %d contacts created", c.name, posts)
			}
		case errors.As(err, &exit) && exit.Exited():
			refused++
			switch {
			case strings.Contains(out, "goroutine ") || strings.Contains(out, "panic:"):
				t.Errorf("%s: syncd panicked instead of refusing the file with a message naming it:\n%s", c.name, firstLines(out, 3))
			case !strings.Contains(out, path):
				t.Errorf("%s: refused (%v), but the message does not name the state file:\n%s", c.name, err, lastLine(out))
			}
			if posts != 0 {
				t.Errorf("%s: refused, yet %d contacts created", c.name, posts)
			}
		default:
			t.Errorf("%s: syncd died: %v\n%s", c.name, err, out)
		}
		if n := len(emu.Contacts()); n != rows {
			t.Fatalf("%s: %d contacts for %d rows", c.name, n, rows)
		}
	}
	t.Logf("%d damaged files refused, %d opened (and no contact created)", refused, opened)
}

// waitOrDump waits for p to end; when it is still running after timeout
// it sends SIGQUIT, so that the Go runtime prints every goroutine's stack
// (where a damaged file made it stall), and fails the test with that dump.
func waitOrDump(t *testing.T, p *proc, timeout time.Duration, name string) error {
	t.Helper()
	select {
	case <-p.Done():
		return p.Err()
	case <-time.After(timeout):
	}
	_ = p.Cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		p.Kill()
	}
	t.Fatalf("%s: syncd %v still running after %s; its goroutines at SIGQUIT:\n%s", name, p.Cmd.Args[1:], timeout, p.Out.String())
	return nil
}

// boltPages reads a bbolt file's page size and high-water mark (pages in
// use) from its newer valid meta page: a 16-byte page header, then magic,
// version, page size and flags (4 bytes each), the root bucket (16), the
// freelist page (8), the high-water mark (8) and the transaction id (8),
// in the machine's byte order.
func boltPages(t *testing.T, b []byte) (pageSize, used int) {
	t.Helper()
	meta := func(off int) (ps, pgid, txid uint64) {
		m := b[off+16:]
		return uint64(binary.NativeEndian.Uint32(m[8:])), binary.NativeEndian.Uint64(m[40:]), binary.NativeEndian.Uint64(m[48:])
	}
	ps, pgid, tx0 := meta(0)
	if _, pgid1, tx1 := meta(int(ps)); tx1 > tx0 {
		pgid = pgid1
	}
	if ps == 0 || pgid < 3 || int(pgid*ps) > len(b) {
		t.Fatalf("unexpected bbolt meta: page size %d, high-water mark %d, file %d bytes", ps, pgid, len(b))
	}
	return int(ps), int(pgid)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
