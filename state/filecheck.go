package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bbolt's on-disk meta page (format version 2, stable since 2014): a 16
// byte page header, then magic, version, page size and flags (uint32
// each), the root bucket (root page and sequence), the freelist page, the
// high-water mark (pgid), the transaction id and an FNV-64a checksum of
// the preceding 56 bytes, all in the machine's byte order.
const (
	boltMagic      = 0xED0CDAED
	boltVersion    = 2
	pageHeaderSize = 16
	metaSize       = 64
)

var (
	errShortMeta = errors.New("short meta page")
	errMagic     = errors.New("bad magic")
	errVersion   = errors.New("unsupported bbolt format version")
	errChecksum  = errors.New("meta page checksum mismatch")
)

type metaPage struct {
	pageSize   uint64
	root       uint64 // the root bucket's page
	freelist   uint64 // the freelist's page, or noFreelist
	pgid, txid uint64
}

// checkFile refuses, before bbolt maps it, a file that bbolt would crash
// on, loop in or silently misread: garbage, a damaged header, a database
// cut short (bbolt maps past the end of a truncated file and the first
// access to a missing page kills the process with SIGBUS), or damaged
// pages (see checkPages). A file that does not
// exist is fine (Open creates it, see createFile). An empty file is
// refused: syncd never leaves one behind (createFile makes a new file
// whole, then links it into place), so 0 bytes means a file that held
// links, checkpoints, webhook secrets and dead letters was cut short, and
// starting afresh over it would lose them silently.
//
// It reads the file under a shared lock (see lockShared), waiting up to
// lockWait for a writer to let go.
func checkFile(path string, readOnly bool, lockWait time.Duration) error {
	f, err := os.Open(path)
	if isNotExist(err) {
		if readOnly {
			return fmt.Errorf("no state file: %w", fs.ErrNotExist)
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockShared(f, lockWait); err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.IsDir() {
		return fmt.Errorf("%w: is a directory", ErrInvalidFile)
	}
	size := info.Size()
	if size == 0 {
		return fmt.Errorf("%w: empty file (0 bytes): its links, checkpoints, webhook secrets and "+
			"dead letters are gone; %s (syncd makes a new state file only where none exists)",
			ErrInvalidFile, restoreHint)
	}

	m0, err0 := readMeta(f, 0)
	pageSize := m0.pageSize
	if err0 != nil {
		// Like bbolt, find the second meta page at each possible page size.
		pageSize = 0
		for i := range 15 {
			ps := int64(1024) << i
			if ps+pageHeaderSize+metaSize > size {
				break
			}
			if m1, err := readMeta(f, ps); err == nil && int64(m1.pageSize) == ps {
				pageSize = m1.pageSize
				break
			}
		}
	}
	if pageSize == 0 {
		switch {
		case errors.Is(err0, errMagic), errors.Is(err0, errShortMeta):
			return fmt.Errorf("%w: not a bbolt database (%d bytes)", ErrInvalidFile, size)
		case errors.Is(err0, errVersion):
			return fmt.Errorf("%w: %v", ErrInvalidFile, err0)
		default:
			return fmt.Errorf("%w: both bbolt meta pages are damaged (%v)", ErrInvalidFile, err0)
		}
	}
	if size < int64(2*pageSize) {
		return fmt.Errorf("%w: truncated to %d bytes, shorter than its two %d byte header pages "+
			"(restore a backup or move the file aside)", ErrInvalidFile, size, pageSize)
	}
	m1, err1 := readMeta(f, int64(pageSize))
	// bbolt uses the valid meta page with the higher transaction id.
	m := m0
	if err0 != nil || (err1 == nil && m1.txid > m0.txid) {
		m = m1
	}
	if need := m.pgid * pageSize; uint64(size) < need {
		return fmt.Errorf("%w: truncated to %d bytes, the database needs %d "+
			"(restore a backup or move the file aside)", ErrInvalidFile, size, need)
	}
	if err := checkPages(f, pageSize, m); err != nil {
		return fmt.Errorf("%w: %w; %s", ErrInvalidFile, err, restoreHint)
	}
	return nil
}

// restoreHint says how to recover from a state file that was cut short.
const restoreHint = `restore the copy made by "syncd state backup --config FILE BACKUP_FILE" ` +
	`to this path, or move the file aside to start with a new state file and run "syncd resync"`

// createFile makes a new, initialised bbolt file at path when none exists.
// It builds the file under a temporary name beside path, syncs it, and
// links it into place (a link fails rather than replace a file another
// process made meanwhile): a crash never leaves an empty or partial file
// at path, so an empty file there always means a damaged one.
func createFile(path string) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("create state file: %w", err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("create state file: %w", err)
	}
	db, err := bolt.Open(name, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("create state file: %w", err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("create state file: %w", err)
	}
	if err := os.Link(name, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create state file: %w", err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// readMeta reads and validates the meta page at off.
func readMeta(r io.ReaderAt, off int64) (metaPage, error) {
	buf := make([]byte, pageHeaderSize+metaSize)
	if _, err := r.ReadAt(buf, off); err != nil {
		if errors.Is(err, io.EOF) {
			return metaPage{}, errShortMeta
		}
		return metaPage{}, err
	}
	b := buf[pageHeaderSize:]
	ne := binary.NativeEndian
	if ne.Uint32(b[0:]) != boltMagic {
		return metaPage{}, errMagic
	}
	if v := ne.Uint32(b[4:]); v != boltVersion {
		return metaPage{}, fmt.Errorf("%w %d", errVersion, v)
	}
	h := fnv.New64a()
	_, _ = h.Write(b[:56])
	if h.Sum64() != ne.Uint64(b[56:]) {
		return metaPage{}, errChecksum
	}
	return metaPage{
		pageSize: uint64(ne.Uint32(b[8:])),
		root:     ne.Uint64(b[16:]),
		freelist: ne.Uint64(b[32:]),
		pgid:     ne.Uint64(b[40:]),
		txid:     ne.Uint64(b[48:]),
	}, nil
}
