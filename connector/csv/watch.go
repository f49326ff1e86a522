package csv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/syncd-io/syncd/internal/logfield"
)

// NotifyMode implements connector.ChangeNotifier.
func (s *Source) NotifyMode() string { return "file watch" }

// NotifyChanges implements connector.ChangeNotifier: it watches the
// file's folder (an export job often writes a new file and renames it
// over the old one, which a watch on the file itself would miss) and calls
// changed once the file has changed and then stayed unchanged (size,
// modification time and inode) for the settle time, so that a
// half-written file is not read. A file still being written keeps
// putting the notification off. The torn-read check of each read still
// applies: a file that changes during the read abandons that pass.
//
// With watch: false it returns at once, having notified nothing.
func (s *Source) NotifyChanges(ctx context.Context, changed func()) error {
	if !s.watch {
		<-ctx.Done()
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", s.path, err)
	}
	defer w.Close()
	dir, base := filepath.Split(s.path)
	if dir == "" {
		dir = "."
	}
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("watch %s: %w", dir, err)
	}
	notified := statFile(s.path) // the file as the daemon's first pass reads it
	seen := notified
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			return fmt.Errorf("watch %s: %w", s.path, err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Base(ev.Name) != base {
				continue
			}
			seen = statFile(s.path)
			settle.Reset(s.settle)
		case <-settle.C:
			now := statFile(s.path)
			switch {
			case now != seen: // still changing: wait for it to settle
				seen = now
				settle.Reset(s.settle)
			case now.missing || now == notified:
				// gone (a replacement is on its way) or back as it was
			default:
				notified = now
				s.log.WithField(logfield.Path, s.path).WithField(logfield.Size, now.st.size).Info("csv file changed; starting a pass")
				changed()
			}
		}
	}
}

// fileSig is a version of the file (its stamp, see torn.go), or none.
type fileSig struct {
	missing bool
	st      stamp
}

func statFile(path string) fileSig {
	fi, err := os.Stat(path)
	if err != nil {
		return fileSig{missing: true} // gone, or unreadable: nothing to read yet
	}
	return fileSig{st: stampOf(fi)}
}
