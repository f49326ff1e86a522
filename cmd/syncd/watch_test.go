package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/syncd-io/syncd/admin"
	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// progressConfig writes rows CSV rows and a configuration syncing them
// into a rate-limited emulator (rate calls a second, the configured
// limit too), so that a pass lasts a few seconds.
func progressConfig(t *testing.T, rows int, rate float64) string {
	t.Helper()
	emu := emulator.NewServer(emulator.Options{Rate: rate, Burst: 10})
	t.Cleanup(emu.Close)
	return e2e.WriteCSVConfig(t, t.TempDir(), e2e.CSVOptions{
		EmulatorURL: emu.URL, APIKey: emulator.DefaultAPIKey, Rows: rows, RateLimit: rate, Burst: 10,
	})
}

// onTerminal runs `syncd run --once` of a rows-row configuration with
// standard error on a pseudo-terminal cols wide, and returns what the
// terminal received and the standard output.
func onTerminal(t *testing.T, rows int, cols uint16) (screen, stdout string) {
	t.Helper()
	cfg := progressConfig(t, rows, 200)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 40, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(&buf, ptmx) // ends when the terminal closes
	}()
	var out bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: tty, Getenv: func(string) string { return "" }}
	err = m.Run(context.Background(), []string{"run", "--once", "--config", cfg})
	tty.Close()
	wg.Wait()
	if err != nil {
		t.Fatalf("run --once: %v\n%s", err, buf.String())
	}
	return buf.String(), out.String()
}

func TestRunOnceDrawsABarOnATerminal(t *testing.T) {
	const rows = 500
	text, stdout := onTerminal(t, rows, 160)
	if !strings.Contains(stdout, "crm: created=500") {
		t.Errorf("the summary is missing from standard output:\n%s", stdout)
	}
	if strings.Contains(text, "sync pass progress") {
		t.Error("a terminal got progress log lines instead of a bar")
	}
	// Each redraw starts with a carriage return: split the frames.
	frame := regexp.MustCompile(`(\d+)% \|[^|]*\| \((\d+)/(\d+)\) crm run · ([^\r\n]*)`)
	var dones []int
	var mid string
	for _, f := range frame.FindAllStringSubmatch(text, -1) {
		if f[3] != strconv.Itoa(rows) {
			t.Fatalf("a frame shows a total of %s, want %d: %q", f[3], rows, f[0])
		}
		n, _ := strconv.Atoi(f[2])
		dones = append(dones, n)
		if mid == "" && n > 0 && n < rows {
			mid = f[0]
		}
	}
	t.Logf("%d frames; one midway: %q", len(dones), mid)
	if len(dones) < 5 || mid == "" {
		t.Fatalf("want several frames of the bar, one midway; got %d:\n%q", len(dones), text)
	}
	for i := 1; i < len(dones); i++ {
		if dones[i] < dones[i-1] {
			t.Fatalf("the bar went back from %d to %d", dones[i-1], dones[i])
		}
	}
	if !regexp.MustCompile(`/s · ETA \d+(\.\d+)?s · created \d+`).MatchString(mid) {
		t.Errorf("a frame midway lacks rate, ETA and writes: %q", mid)
	}
	if !regexp.MustCompile(`100% \|█+\| \(500/500\) crm run · finished · [\d.]+/s · created 500`).MatchString(text) {
		t.Errorf("the bar does not end full, with the pass's writes:\n%q", text[max(0, len(text)-600):])
	}
}

func TestRunOnceLogsProgressWithoutATerminal(t *testing.T) {
	defer func(d time.Duration) { logEvery = d }(logEvery)
	logEvery = 300 * time.Millisecond
	const rows = 500
	cfg := progressConfig(t, rows, 200)
	var out, errb capture.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if err := m.Run(context.Background(), []string{"run", "--once", "--config", cfg}); err != nil {
		t.Fatalf("run --once: %v\n%s", err, errb.String())
	}
	logs := errb.String()
	if strings.Contains(logs, "\r") || strings.Contains(logs, "█") {
		t.Error("a bar was drawn into a log")
	}
	line := regexp.MustCompile(`level=info msg="sync pass progress" (.*)`)
	lines := line.FindAllStringSubmatch(logs, -1)
	if len(lines) < 3 {
		t.Fatalf("%d progress lines, want one every %s of the pass:\n%s", len(lines), logEvery, logs)
	}
	field := func(l, k string) string {
		m := regexp.MustCompile(`\b` + k + `=(\S+)`).FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("progress line lacks %s: %s", k, l)
		}
		return m[1]
	}
	last := -1
	for _, l := range lines {
		f := l[1]
		if field(f, "connector") != "crm" || field(f, "kind") != "run" || field(f, "total") != "500" || field(f, "total_is_estimate") != "false" {
			t.Errorf("progress line %s", f)
		}
		done, _ := strconv.Atoi(field(f, "done"))
		if done < last {
			t.Errorf("done went back from %d to %d", last, done)
		}
		last = done
		field(f, "rate_per_second")
		field(f, "eta_seconds")
		field(f, "api_calls")
	}
	midway := 0
	for _, l := range lines {
		if d, _ := strconv.Atoi(field(l[1], "done")); d > 0 && d < rows {
			midway++
			if field(l[1], "eta_seconds") == "unknown" || field(l[1], "created") == "0" {
				t.Errorf("a line midway lacks an ETA or the creates: %s", l[1])
			}
		}
	}
	if midway == 0 {
		t.Errorf("no progress line midway through the pass:\n%s", logs)
	}
}

// A resync handed to the running daemon shows the daemon's progress too,
// read from its /status: here as log lines, since standard error is not
// a terminal.
func TestResyncThroughTheDaemonLogsItsProgress(t *testing.T) {
	defer func(d time.Duration) { logEvery = d }(logEvery)
	logEvery = 300 * time.Millisecond
	const rows = 400
	emu := emulator.NewServer(emulator.Options{Rate: 200, Burst: 10})
	t.Cleanup(emu.Close)
	dir := t.TempDir()
	o := e2e.CSVOptions{EmulatorURL: emu.URL, APIKey: emulator.DefaultAPIKey, Rows: rows, RateLimit: 200, Burst: 10,
		AdminListen: fmt.Sprintf("127.0.0.1:%d", freePort(t)), Company: "Old"}
	cfg := e2e.WriteCSVConfig(t, dir, o)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	daemonDone := make(chan error, 1)
	var daemonLog capture.Buffer
	go func() {
		m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &daemonLog, Getenv: func(string) string { return "" }}
		daemonDone <- m.Run(ctx, []string{"run", "--config", cfg})
	}()
	cl := &admin.Client{BaseURL: "http://" + o.AdminListen}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon's first pass never ended:\n%s", daemonLog.String())
		}
		if st, err := cl.Status(ctx); err == nil && st.Connectors[0].Links == rows && !st.Connectors[0].Running {
			break
		}
	}

	o.Company = "New" // every row changes: the resync patches them all
	e2e.WriteCSVConfig(t, dir, o)
	// Meanwhile `syncd status` shows the resync's figures.
	statusSaw := make(chan string, 1)
	stopStatus := make(chan struct{})
	go func() {
		defer close(statusSaw)
		for {
			select {
			case <-stopStatus:
				return
			case <-time.After(100 * time.Millisecond):
			}
			var sout capture.Buffer
			sm := &Main{Stdin: strings.NewReader(""), Stdout: &sout, Stderr: io.Discard, Getenv: func(string) string { return "" }}
			if sm.Run(ctx, []string{"status", "--config", cfg}) == nil && strings.Contains(sout.String(), "crm: resync reading, ") {
				statusSaw <- sout.String()
				return
			}
		}
	}()
	var out, errb capture.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if err := m.Run(context.Background(), []string{"resync", "--config", cfg}); err != nil {
		t.Fatalf("resync: %v\n%s", err, errb.String())
	}
	close(stopStatus)
	if st := <-statusSaw; !regexp.MustCompile(`crm: resync reading, \d+ of 400 records \(\d+%\) · [\d.]+ records/s · `).MatchString(st) {
		t.Errorf("syncd status during the resync did not show its progress:\n%s", st)
	}
	cancel()
	if err := <-daemonDone; err != nil {
		t.Errorf("daemon: %v", err)
	}
	logs := errb.String()
	if !strings.Contains(logs, "a daemon holds") || !strings.Contains(out.String(), "crm resync: created=0 updated=400") {
		t.Fatalf("the resync was not handed to the daemon:\n%s\n%s", out.String(), logs)
	}
	lines := regexp.MustCompile(`msg="sync pass progress" .*connector=crm .*done=(\d+) .*kind=resync .*total=400 `).FindAllStringSubmatch(logs, -1)
	if len(lines) < 2 {
		t.Fatalf("%d progress lines of the daemon's resync, want several:\n%s", len(lines), logs)
	}
	if first, _ := strconv.Atoi(lines[0][1]); first >= rows {
		t.Errorf("the first progress line already shows %d of %d done", first, rows)
	}
}

// On a narrow terminal the bar's line is cut to its width: a line that
// wrapped would not be redrawn in place.
func TestTheBarFitsANarrowTerminal(t *testing.T) {
	const cols = 72
	text, _ := onTerminal(t, 300, cols)
	frames := 0
	for _, line := range regexp.MustCompile(`[\r\n]+`).Split(text, -1) {
		line = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`).ReplaceAllString(line, "")
		if !strings.Contains(line, "/300)") {
			continue
		}
		frames++
		if n := utf8.RuneCountInString(strings.TrimRight(line, " ")); n > cols {
			t.Fatalf("a frame is %d wide on a terminal of %d: %q", n, cols, line)
		}
	}
	if frames < 3 || !strings.Contains(text, "…") {
		t.Fatalf("%d frames of the bar, none cut to fit:\n%q", frames, text)
	}
}
