package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrCorrupt means the state file's content is damaged: a value that does
// not decode, or a page that makes bbolt fail or panic. Errors wrapping it
// are *CorruptError values naming the file and how to recover.
var ErrCorrupt = errors.New("state file is damaged")

// RecoveryHint tells the user how to get going again after ErrCorrupt.
const RecoveryHint = `restore the copy made by "syncd state backup", or move the file aside ` +
	`and run "syncd resync" to rebuild the links from the workspace`

// CorruptError is a damaged state file: errors.Is(err, ErrCorrupt) holds.
type CorruptError struct {
	Path string // the state file
	Err  error  // what went wrong reading it
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("state file %s is damaged (%v): %s", e.Path, e.Err, RecoveryHint)
}

// Unwrap returns the cause.
func (e *CorruptError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// closeWait bounds how long Close waits for bbolt once a write transaction
// panicked: bbolt may have kept its writer lock.
const closeWait = 2 * time.Second

// tx runs fn in a read or write transaction. A panic inside bbolt
// (including a fault reading the mapped file) becomes a *CorruptError; a
// panic in a write transaction also breaks the store, whose later
// transactions fail at once instead of waiting for a lock bbolt may hold.
// Errors that say the file is damaged become *CorruptError values, and
// bbolt's and the system's own errors name the file.
func (s *file) tx(write bool, fn func(tx *bolt.Tx) error) (err error) {
	if b := s.broken.Load(); b != nil {
		return *b
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		cerr := &CorruptError{Path: s.path, Err: fmt.Errorf("bbolt panicked: %v", r)}
		if write {
			var e error = cerr
			s.broken.CompareAndSwap(nil, &e)
		}
		err = cerr
	}()
	if write {
		err = s.db.Update(fn)
	} else {
		err = s.db.View(fn)
	}
	return s.classify(err)
}

// classify wraps err as described for tx.
func (s *file) classify(err error) error {
	if err == nil || errors.Is(err, ErrCorrupt) {
		return err
	}
	var (
		pathErr *fs.PathError
		errno   syscall.Errno
	)
	switch {
	case errors.Is(err, errLinkFormat), errors.Is(err, errDecode),
		errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrChecksum),
		errors.Is(err, berrors.ErrInvalidMapping), errors.Is(err, berrors.ErrIncompatibleValue):
		return &CorruptError{Path: s.path, Err: err}
	case isBoltError(err), errors.As(err, &pathErr), errors.As(err, &errno):
		return fmt.Errorf("state file %s: %w", s.path, err)
	}
	return err
}

// isBoltError reports whether err is one of bbolt's own errors.
func isBoltError(err error) bool {
	for _, e := range []error{berrors.ErrDatabaseNotOpen, berrors.ErrTxNotWritable, berrors.ErrTxClosed,
		berrors.ErrDatabaseReadOnly, berrors.ErrFreePagesNotLoaded, berrors.ErrMaxSizeReached,
		berrors.ErrTimeout, berrors.ErrVersionMismatch} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// errDecode marks a stored value that does not decode: the file is damaged.
var errDecode = errors.New("undecodable value")

// unmarshal decodes a stored JSON value; its errors wrap errDecode.
func unmarshal(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %w", errDecode, err)
	}
	return nil
}
