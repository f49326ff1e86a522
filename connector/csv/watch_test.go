package csv_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/csv"
)

const header = "id,first_name\n"

// notifications runs the source's NotifyChanges in the background and
// records when changed was called.
type notifications struct {
	mu    sync.Mutex
	at    []time.Time
	done  chan error
	start time.Time
}

func watch(t *testing.T, path string, settle time.Duration, on bool) *notifications {
	t.Helper()
	src := open(t, &csv.Settings{Path: path, Delimiter: ",", IDColumn: "id", Encoding: "utf-8", BatchSize: 10, Watch: on, Settle: settle})
	n, ok := src.(connector.ChangeNotifier)
	if !ok {
		t.Fatal("the csv source is no ChangeNotifier")
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &notifications{done: make(chan error, 1), start: time.Now()}
	go func() {
		w.done <- n.NotifyChanges(ctx, func() {
			w.mu.Lock()
			w.at = append(w.at, time.Now())
			w.mu.Unlock()
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-w.done; err != nil {
			t.Errorf("NotifyChanges: %v", err)
		}
		src.Close()
	})
	time.Sleep(50 * time.Millisecond) // the watch is set up
	return w
}

func (w *notifications) times() []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Time(nil), w.at...)
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestNotifyChanges(t *testing.T) {
	const settle = 300 * time.Millisecond
	tests := []struct {
		name string
		// change changes the folder and returns when its last write was.
		change func(t *testing.T, dir, path string) time.Time
		want   int
	}{
		{"replaced by a rename, as export jobs do", func(t *testing.T, dir, path string) time.Time {
			tmp := filepath.Join(dir, ".contacts.csv.tmp")
			writeFile(t, tmp, header+"1,Ada\n2,Alan\n")
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
			return time.Now()
		}, 1},
		{"rewritten in place", func(t *testing.T, dir, path string) time.Time {
			writeFile(t, path, header+"1,Ada Lovelace\n")
			return time.Now()
		}, 1},
		{"written in three parts with pauses shorter than the settle time", func(t *testing.T, dir, path string) time.Time {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, part := range []string{header, "1,Ada\n", "2,Alan\n"} {
				if _, err := f.WriteString(part); err != nil {
					t.Fatal(err)
				}
				time.Sleep(settle / 3)
			}
			return time.Now().Add(-settle / 3)
		}, 1},
		{"another file of the folder changed", func(t *testing.T, dir, path string) time.Time {
			writeFile(t, filepath.Join(dir, "other.csv"), header+"9,Zed\n")
			return time.Now()
		}, 0},
		{"nothing changed", func(t *testing.T, dir, path string) time.Time { return time.Now() }, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "contacts.csv")
			writeFile(t, path, header+"1,Ada\n")
			w := watch(t, path, settle, true)
			last := tc.change(t, dir, path)
			time.Sleep(settle*2 + 700*time.Millisecond)
			got := w.times()
			if len(got) != tc.want {
				t.Fatalf("notified %d times, want %d", len(got), tc.want)
			}
			for _, at := range got {
				if at.Sub(last) < settle-50*time.Millisecond {
					t.Errorf("notified %v after the last write, before the file had settled for %v", at.Sub(last), settle)
				}
			}
		})
	}
}

func TestNotifyChangesOff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "contacts.csv")
	writeFile(t, path, header+"1,Ada\n")
	w := watch(t, path, 100*time.Millisecond, false)
	writeFile(t, path, header+"1,Ada\n2,Alan\n")
	time.Sleep(500 * time.Millisecond)
	if n := len(w.times()); n != 0 {
		t.Errorf("watch: false notified %d times", n)
	}
}

func TestNotifyChangesMissingFolder(t *testing.T) {
	src := open(t, &csv.Settings{Path: filepath.Join(t.TempDir(), "gone", "contacts.csv"), Delimiter: ",", IDColumn: "id", Encoding: "utf-8", BatchSize: 10, Watch: true})
	defer src.Close()
	err := src.(connector.ChangeNotifier).NotifyChanges(context.Background(), func() {})
	if err == nil {
		t.Fatal("watching a file in a missing folder succeeded")
	}
}
