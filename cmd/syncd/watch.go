package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/sirupsen/logrus"
	"golang.org/x/term"

	"github.com/syncd-io/syncd/daemon"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/progress"
)

// How often the watcher looks at the passes: a bar is redrawn at a
// person's pace; a log line is written every 10 s, which is enough to
// follow a pass in journald or docker logs without flooding them.
const barEvery = 200 * time.Millisecond

// barWidth is the bar's own width, in cells.
const barWidth = 28

// logEvery is a variable for the tests only.
var logEvery = 10 * time.Second

// passWatcher shows the passes of `syncd run --once` and `syncd resync`
// while they run: on a terminal, a progress bar per connector pass
// (done/total, writes by kind, rate, time left); elsewhere (systemd,
// Docker, CI), a log line with the same figures as fields.
type passWatcher struct {
	w        io.Writer
	terminal bool
	cols     int // the terminal's width
	log      *logrus.Logger
	src      passSource
	every    time.Duration

	mu   sync.Mutex          // guards bars; held while drawing
	bars map[string]*passBar // by connector, while its pass runs
}

// passBar is the bar of one pass.
type passBar struct {
	bar     *progressbar.ProgressBar
	started time.Time
	total   int64 // the bar's max; -1 while unknown (a spinner)
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// passSource tells the watcher about the passes of the connectors.
type passSource interface {
	// refresh is called once before each look at the passes.
	refresh()
	// names are the connectors, in order.
	names() []string
	// progress returns the connector's running pass, false when none.
	progress(name string) (progress.Snapshot, bool)
	// final returns the connector's last pass as it ended, false when
	// that is not known.
	final(name string) (progress.Snapshot, bool)
}

// localPasses are the passes of this process's daemon.
type localPasses []*daemon.Connector

func (l localPasses) refresh() {}

func (l localPasses) names() []string {
	out := make([]string, len(l))
	for i, c := range l {
		out[i] = c.Name
	}
	return out
}

func (l localPasses) get(name string) *daemon.Connector {
	for _, c := range l {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (l localPasses) progress(name string) (progress.Snapshot, bool) { return l.get(name).Progress() }

func (l localPasses) final(name string) (progress.Snapshot, bool) {
	return l.get(name).Tracker().Final()
}

func newPassWatcher(w io.Writer, log *logrus.Logger, conns []*daemon.Connector) *passWatcher {
	return newWatcher(w, log, localPasses(conns), barEvery)
}

func newWatcher(w io.Writer, log *logrus.Logger, src passSource, barEvery time.Duration) *passWatcher {
	pw := &passWatcher{w: w, terminal: isTerminal(w), log: log, src: src, every: logEvery, bars: map[string]*passBar{}}
	if pw.terminal {
		pw.every = barEvery
		pw.cols = 80
		if c, _, err := term.GetSize(int(w.(*os.File).Fd())); err == nil && c > 0 {
			pw.cols = c
		}
	}
	return pw
}

// start watches until stop is called; stop draws the final state. On a
// terminal the logger writes through the watcher meanwhile, so that a log
// line never lands in the middle of a bar.
func (pw *passWatcher) start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	if pw.terminal && pw.log.Out == pw.w {
		pw.log.SetOutput(pw)
		defer func() {
			prev := stop
			stop = func() { prev(); pw.log.SetOutput(pw.w) }
		}()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(pw.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pw.tick()
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
		if pw.terminal {
			pw.tick() // close the bars of the passes that ended
		}
	}
}

// Write writes a log line above the bar: the bar is cleared, the line
// written, and the bar drawn again below it.
func (pw *passWatcher) Write(p []byte) (n int, err error) {
	pw.above(func() { n, err = pw.w.Write(p) })
	return n, err
}

// above runs write, which prints to the terminal the bars are on, with
// the bars cleared before and drawn again after.
func (pw *passWatcher) above(write func()) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	for _, pb := range pw.bars {
		_ = pb.bar.Clear()
	}
	write()
	for _, pb := range pw.bars {
		_ = pb.bar.Add(0)
	}
}

func (pw *passWatcher) tick() {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.src.refresh()
	for _, name := range pw.src.names() {
		s, running := pw.src.progress(name)
		if !pw.terminal {
			if running {
				pw.log.WithFields(progressFields(name, s)).Info("sync pass progress")
			}
			continue
		}
		pb := pw.bars[name]
		if pb != nil && (!running || !s.StartedAt.Equal(pb.started)) {
			pw.end(name, pb)
			delete(pw.bars, name)
			pb = nil
		}
		if !running {
			continue
		}
		if pb == nil {
			pb = pw.newBar(s)
			pw.bars[name] = pb
		}
		pw.draw(name, pb, s, false)
	}
}

// end draws the pass as it ended, when that is known, and lets its bar
// go; an end not known leaves the bar where it was.
func (pw *passWatcher) end(name string, pb *passBar) {
	if f, ok := pw.src.final(name); ok && f.StartedAt.Equal(pb.started) {
		pw.draw(name, pb, f, true)
		_ = pb.bar.Finish()
	} else {
		_ = pb.bar.Exit()
	}
	fmt.Fprintln(pw.w)
}

func (pw *passWatcher) newBar(s progress.Snapshot) *passBar {
	b := progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(pw.w),
		progressbar.OptionSetWidth(barWidth),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(false), // the ETA is ours: it knows the API limit
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionThrottle(0),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionSetSpinnerChangeInterval(0), // our ticks redraw it
	)
	return &passBar{bar: b, started: s.StartedAt, total: -1}
}

// draw shows s. A full bar is final (the library draws it once and no
// more), so a running pass shows at most one record short of its total:
// it is not over before its sweep and its records are.
func (pw *passWatcher) draw(name string, pb *passBar, s progress.Snapshot, final bool) {
	if s.Total != nil && *s.Total != pb.total {
		pb.total = *s.Total
		pb.bar.ChangeMax64(max(pb.total, 1))
		progressbar.OptionSetPredictTime(false)(pb.bar) // ChangeMax64 turned it back on
	}
	done := s.Done
	if !final && pb.total > 0 {
		done = min(done, pb.total-1)
	}
	pb.bar.Describe(fit(barText(name, s), pw.cols-barWidth-len(" 100% || (/) ")-2*len(fmt.Sprint(pb.total))-1))
	_ = pb.bar.Set64(done)
}

// fit cuts text to n runes (an ellipsis marks the cut), so that the bar's
// line never wraps: a wrapped line is not redrawn in place.
func fit(text string, n int) string {
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	if n < 1 {
		return ""
	}
	return string(r[:n-1]) + "…"
}

// barText is what follows the bar: the pass, the rate, the time left and
// the writes so far.
func barText(name string, s progress.Snapshot) string {
	parts := []string{name + " " + s.Kind}
	if s.Phase != progress.PhaseReading {
		parts = append(parts, s.Phase)
	}
	if s.Total == nil {
		parts = append(parts, "total unknown")
	} else if s.TotalIsEstimate {
		parts = append(parts, "total estimated")
	}
	parts = append(parts, fmt.Sprintf("%.1f/s", s.RatePerSecond))
	if eta, ok := s.ETA(); ok {
		parts = append(parts, "ETA "+eta.Round(time.Second).String())
	}
	for _, k := range progress.WriteKinds[:len(progress.WriteKinds)-1] { // all but unchanged
		if n := s.Writes[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	return strings.Join(parts, " · ")
}

// progressFields are the figures of a pass as log fields.
func progressFields(name string, s progress.Snapshot) logrus.Fields {
	f := logrus.Fields{
		logfield.Connector: name, logfield.Kind: s.Kind, logfield.Phase: s.Phase, logfield.Done: s.Done,
		logfield.Total: "unknown", logfield.TotalIsEstimate: s.TotalIsEstimate,
		logfield.RatePerSecond: fmt.Sprintf("%.1f", s.RatePerSecond), logfield.EtaSeconds: "unknown", logfield.APICalls: s.APICalls,
	}
	if s.Total != nil {
		f["total"] = *s.Total
	}
	if eta, ok := s.ETA(); ok {
		f["eta_seconds"] = int64(eta.Round(time.Second).Seconds())
	}
	for k, n := range s.Writes {
		f[k] = n
	}
	return f
}
