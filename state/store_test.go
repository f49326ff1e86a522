package state

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func TestOpenCreatesCurrentSchemaAndPersists(t *testing.T) {
	s, clk := openTest(t)
	v, err := s.SchemaVersion()
	must(t, err)
	if v != CurrentSchemaVersion() || v < 1 {
		t.Fatalf("schema version = %d, want %d", v, CurrentSchemaVersion())
	}
	if info, err := os.Stat(s.Path()); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("state file mode: %v, %v (want 0600: it holds webhook secrets)", info, err)
	}
	must(t, s.Checkpoints.Set("crm", "", "cursor-1"))
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e1", ContactID: "c1"}))

	s = reopen(t, s, clk)
	if got, _ := s.Checkpoints.Get("crm", ""); got != "cursor-1" {
		t.Errorf("checkpoint after reopen = %q", got)
	}
	if l, ok, err := s.Links.Get("crm", "e1"); err != nil || !ok || l.ContactID != "c1" {
		t.Errorf("link after reopen = %+v, %v, %v", l, ok, err)
	}
}

func TestOpenMissingFileCreatesWholeFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.db")
	s, err := Open(path, Options{NoSync: true})
	must(t, err)
	defer s.Close()
	if v, _ := s.SchemaVersion(); v != CurrentSchemaVersion() {
		t.Fatalf("schema version = %d", v)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "new.db" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v; want only new.db (no temporary file left)", names)
	}
}

// realDB writes a state file with enough links to span many pages and
// returns its bytes.
func realDB(t *testing.T) []byte {
	t.Helper()
	s, _ := openTest(t)
	var ls []Link
	for i := range 3000 {
		ls = append(ls, Link{Connector: "crm", ExternalID: fmt.Sprintf("e%05d", i), ContactID: fmt.Sprintf("c%05d", i),
			Fields: map[string]string{"firstName": strings.Repeat("x", 50)}})
	}
	must(t, s.Links.PutAll(ls))
	var buf bytes.Buffer
	if _, err := s.Backup(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpenRefusesInvalidFiles(t *testing.T) {
	db := realDB(t)
	pageSize := os.Getpagesize()
	foreign := func(t *testing.T, path string) {
		b, err := bolt.Open(path, 0o600, nil)
		must(t, err)
		must(t, b.Update(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket([]byte("somethingElse"))
			return err
		}))
		must(t, b.Close())
	}
	noVersion := func(t *testing.T, path string) {
		b, err := bolt.Open(path, 0o600, nil)
		must(t, err)
		must(t, b.Update(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket(bucketMeta)
			return err
		}))
		must(t, b.Close())
	}
	damagedMeta := func(t *testing.T, path string) {
		d := bytes.Clone(db)
		d[pageHeaderSize+20] ^= 0xff          // meta 0
		d[pageSize+pageHeaderSize+20] ^= 0xff // meta 1
		must(t, os.WriteFile(path, d, 0o600))
	}
	bytesOf := func(b []byte) func(*testing.T, string) {
		return func(t *testing.T, path string) { must(t, os.WriteFile(path, b, 0o600)) }
	}
	tests := []struct {
		name     string
		write    func(t *testing.T, path string)
		readOnly bool
		want     error
		msg      string
	}{
		{"garbage", bytesOf([]byte(strings.Repeat("not a database\n", 1000))), false, ErrInvalidFile, "not a bbolt database"},
		{"tiny garbage", bytesOf([]byte("x")), false, ErrInvalidFile, "not a bbolt database"},
		{"csv by mistake", bytesOf([]byte("id,first_name\n1,Ada\n")), false, ErrInvalidFile, "not a bbolt database"},
		{"truncated to half", bytesOf(db[:len(db)/2]), false, ErrInvalidFile, "truncated"},
		{"truncated to three pages", bytesOf(db[:3*pageSize]), false, ErrInvalidFile, "truncated"},
		{"truncated inside the second meta page", bytesOf(db[:pageSize+100]), false, ErrInvalidFile, "truncated"},
		{"truncated inside the first meta page", bytesOf(db[:50]), false, ErrInvalidFile, "not a bbolt database"},
		{"truncated read-only", bytesOf(db[:len(db)/2]), true, ErrInvalidFile, "truncated"},
		{"both meta pages damaged", damagedMeta, false, ErrInvalidFile, "damaged"},
		{"another program's bbolt file", foreign, false, ErrInvalidFile, "without syncd metadata"},
		{"meta bucket without version", noVersion, false, ErrInvalidFile, "schemaVersion"},
		{"directory", func(t *testing.T, path string) { must(t, os.Mkdir(path, 0o700)) }, false, ErrInvalidFile, "directory"},
		{"missing read-only", func(*testing.T, string) {}, true, fs.ErrNotExist, "no state file"},
		{"empty read-only", bytesOf(nil), true, ErrInvalidFile, "empty"},
		{"truncated to 0 bytes", bytesOf(nil), false, ErrInvalidFile, `0 bytes): its links, checkpoints, webhook secrets and dead letters are gone; restore the copy made by "syncd state backup`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			tt.write(t, path)
			before, _ := os.ReadFile(path)
			s, err := Open(path, Options{Timeout: 100 * time.Millisecond, ReadOnly: tt.readOnly})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %q is not %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q should name the path and say %q", err, tt.msg)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(before, after) {
				t.Errorf("Open changed the refused file")
			}
		})
	}
}

func TestOpenValidDatabaseWithDamagedFirstMeta(t *testing.T) {
	// bbolt recovers from one damaged meta page with the other; so must
	// the pre-check.
	db := bytes.Clone(realDB(t))
	db[pageHeaderSize+20] ^= 0xff
	path := filepath.Join(t.TempDir(), "state.db")
	must(t, os.WriteFile(path, db, 0o600))
	s, err := Open(path, Options{NoSync: true})
	must(t, err)
	defer s.Close()
	if n, err := s.Links.Count("crm"); err != nil || n != 3000 {
		t.Fatalf("links = %d, %v", n, err)
	}
}

func TestOpenLockedInProcess(t *testing.T) {
	s, _ := openTest(t)
	for _, readOnly := range []bool{false, true} {
		start := time.Now()
		s2, err := Open(s.Path(), Options{Timeout: 200 * time.Millisecond, ReadOnly: readOnly})
		if err == nil {
			s2.Close()
			t.Fatalf("second Open (readOnly %v) of a held file succeeded", readOnly)
		}
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("error %q is not ErrLocked", err)
		}
		for _, want := range []string{s.Path(), "daemon", "admin address"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
		if d := time.Since(start); d < 150*time.Millisecond || d > 5*time.Second {
			t.Errorf("Open gave up after %v, want about the 200ms timeout", d)
		}
	}
	must(t, s.Close())
	s3, err := Open(s.Path(), Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s3.Close()
}

func TestReadOnlyStoresShareAndRefuseWrites(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Checkpoints.Set("crm", "", "c1"))
	path := s.Path()
	must(t, s.Close())

	r1, err := Open(path, Options{ReadOnly: true})
	must(t, err)
	defer r1.Close()
	r2, err := Open(path, Options{ReadOnly: true, Timeout: 200 * time.Millisecond})
	must(t, err)
	defer r2.Close()
	if got, _ := r2.Checkpoints.Get("crm", ""); got != "c1" {
		t.Errorf("read-only checkpoint = %q", got)
	}
	if err := r1.Checkpoints.Set("crm", "", "c2"); err == nil {
		t.Error("write through a read-only store succeeded")
	}
	if _, err := Open(path, Options{Timeout: 100 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Errorf("read-write Open while readers hold the file: %v, want ErrLocked", err)
	}
}

// gatedWriter lets a test act while Backup is in the middle of its copy.
type gatedWriter struct {
	bytes.Buffer
	once    sync.Once
	started chan struct{} // closed at the first Write
	resume  <-chan time.Time
	writing <-chan struct{} // closed when the concurrent writer made progress
	// progressed records that it did so while the copy was under way.
	progressed bool
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.once.Do(func() {
		close(g.started)
		select {
		case <-g.writing:
			g.progressed = true
		case <-g.resume: // a writer that must remap the file waits for the copy
		}
	})
	return g.Buffer.Write(p)
}

func TestBackupWhileWriting(t *testing.T) {
	s, _ := openTest(t)
	// Links are written one per transaction in order e00000, e00001, ...
	// The copy must hold exactly the links committed when it started,
	// each with its reverse entry, while the writer goes on.
	const before, n = 500, 2000
	link := func(i int) Link {
		return Link{Connector: "crm", ExternalID: fmt.Sprintf("e%05d", i), ContactID: fmt.Sprintf("c%05d", i),
			WorkspaceHash: fmt.Sprint(i)}
	}
	for i := range before {
		must(t, s.Links.Put(link(i)))
	}
	writing := make(chan struct{})
	w := &gatedWriter{started: make(chan struct{}), resume: time.After(5 * time.Second), writing: writing}
	errc := make(chan error, 1)
	go func() {
		<-w.started
		for i := before; i < n; i++ {
			if err := s.Links.Put(link(i)); err != nil {
				errc <- err
				return
			}
			if i == before+100 {
				close(writing)
			}
		}
		errc <- nil
	}()
	if _, err := s.Backup(w); err != nil {
		t.Fatal(err)
	}
	must(t, <-errc)
	if !w.progressed {
		t.Error("the writer was blocked during the whole copy")
	}

	path := filepath.Join(t.TempDir(), "copy.db")
	must(t, os.WriteFile(path, w.Bytes(), 0o600))
	b, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("open backup: %v", err)
	}
	defer b.Close()
	must(t, b.Check())
	count, err := b.Links.Count("crm")
	must(t, err)
	if count != before {
		t.Fatalf("backup holds %d links, want the %d committed when it started", count, before)
	}
	i := 0
	must(t, b.Links.ForEach("crm", func(l Link) error {
		want := link(i)
		if l.ExternalID != want.ExternalID || l.ContactID != want.ContactID || l.WorkspaceHash != want.WorkspaceHash {
			return fmt.Errorf("link %d = %+v, want %+v", i, l, want)
		}
		if r, ok, err := b.Links.ByContact("crm", want.ContactID); err != nil || !ok || r.ExternalID != want.ExternalID {
			return fmt.Errorf("reverse entry of %s: %+v %v %v", want.ContactID, r, ok, err)
		}
		i++
		return nil
	}))
	if i != before {
		t.Fatalf("scanned %d links in the backup, want %d", i, before)
	}
	if final, _ := s.Links.Count("crm"); final != n {
		t.Fatalf("store holds %d links after the writer, want %d", final, n)
	}
}

func TestCheckAcceptsHealthyFile(t *testing.T) {
	s, _ := openTest(t)
	must(t, s.Links.Put(Link{Connector: "crm", ExternalID: "e", ContactID: "c"}))
	must(t, s.Check())
}

// lockHelperEnv makes the test binary hold a state file for
// TestOpenLockedByAnotherProcess.
const lockHelperEnv = "SYNCD_STATE_TEST_HOLD"

func TestOpenLockedByAnotherProcess(t *testing.T) {
	if path := os.Getenv(lockHelperEnv); path != "" {
		// Child: hold the file until the parent closes stdin.
		s, err := Open(path, Options{})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println("holding")
		_, _ = io.Copy(io.Discard, os.Stdin)
		s.Close()
		return
	}
	path := filepath.Join(t.TempDir(), "state.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenLockedByAnotherProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // if the test fails early
	r := bufio.NewReader(stdout)
	line, err := r.ReadString('\n')
	if err != nil || line != "holding\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}

	_, err = Open(path, Options{Timeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Open of a file held by another process = %v, want ErrLocked naming the path", err)
	}
	must(t, stdin.Close())
	_, _ = io.Copy(io.Discard, r) // until the child exits
	must(t, cmd.Wait())
	s, err := Open(path, Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("Open after the other process exited: %v", err)
	}
	s.Close()
}
