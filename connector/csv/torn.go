package csv

import (
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"syscall"
	"time"
)

// ErrFileChanged is returned (wrapped) by a read during which the file
// changed: written in place, cut short, or replaced. The read stops before
// its next batch and returns it, so the pass infers no deletion from a
// torn read; the next pass reads the new file whole.
var ErrFileChanged = errors.New("the file changed while it was read")

// stamp is what tells one version of a file from another without reading
// it: size, modification and change times (a write moves both; only the
// first can be set back by hand) and the inode (a replacement by rename).
type stamp struct {
	size         int64
	mtime, ctime int64
	dev, ino     uint64
}

func stampOf(fi os.FileInfo) stamp {
	st := stamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ctime = time.Unix(int64(sys.Ctim.Sec), int64(sys.Ctim.Nsec)).UnixNano() //nolint:unconvert // int32 on some platforms
		st.dev, st.ino = uint64(sys.Dev), sys.Ino                                  //nolint:unconvert
	}
	return st
}

// differs says how b differs from a ("" when it does not).
func (a stamp) differs(b stamp) string {
	switch {
	case a.dev != b.dev || a.ino != b.ino:
		return "replaced by another file"
	case a.size != b.size:
		return fmt.Sprintf("size %d bytes, now %d", a.size, b.size)
	case a.mtime != b.mtime || a.ctime != b.ctime:
		return "written to (its modification time moved)"
	}
	return ""
}

// watch follows one read of a file: its stamp when the read began and a
// hash of every byte read, to tell at each batch and at the end whether
// the file is still the one that was read.
type watch struct {
	path  string
	f     *os.File
	start stamp
	began time.Time
	// sum hashes what was read, while it was read in order (see unhashed).
	sum      hash.Hash32
	read     int64
	unhashed bool // a recovery seeked back: the hash no longer covers the file in order
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func newWatch(path string, f *os.File) (*watch, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return &watch{path: path, f: f, start: stampOf(fi), began: time.Now(), sum: crc32.New(castagnoli)}, nil
}

// reader returns r, hashing what is read through it.
func (w *watch) reader(r io.Reader) io.Reader { return &hashingReader{r: r, w: w} }

type hashingReader struct {
	r io.Reader
	w *watch
}

func (h *hashingReader) Read(b []byte) (int, error) {
	n, err := h.r.Read(b)
	if !h.w.unhashed {
		h.w.sum.Write(b[:n])
		h.w.read += int64(n)
	}
	return n, err
}

// check returns an ErrFileChanged error when the open file or the path
// no longer is the file as it was when the read began.
func (w *watch) check() error {
	fi, err := w.f.Stat()
	if err != nil {
		return fmt.Errorf("read %s: %w", w.path, err)
	}
	if d := w.start.differs(stampOf(fi)); d != "" {
		return w.changed(d)
	}
	pi, err := os.Stat(w.path)
	if err != nil {
		return w.changed("removed (" + err.Error() + ")")
	}
	if d := w.start.differs(stampOf(pi)); d != "" {
		return w.changed(d)
	}
	return nil
}

// finish is check at the end of the read, plus the hash of what was read
// against the file's, when the file's times are recent enough that a
// write within their granularity could have left them unmoved.
func (w *watch) finish() error {
	if err := w.check(); err != nil {
		return err
	}
	if w.unhashed || time.Unix(0, w.start.mtime).Before(w.began.Add(-2*time.Second)) {
		return nil
	}
	if w.read != w.start.size {
		return w.changed(fmt.Sprintf("%d bytes read of %d", w.read, w.start.size))
	}
	again := crc32.New(castagnoli)
	if _, err := io.Copy(again, io.NewSectionReader(w.f, 0, w.start.size)); err != nil {
		return fmt.Errorf("read %s: %w", w.path, err)
	}
	if again.Sum32() != w.sum.Sum32() {
		return w.changed("its content differs from what was read")
	}
	return nil
}

func (w *watch) changed(how string) error {
	return fmt.Errorf("read %s: %w (%s): the pass is abandoned, nothing is deleted from a torn read; the next pass reads the new file whole", w.path, ErrFileChanged, how)
}
