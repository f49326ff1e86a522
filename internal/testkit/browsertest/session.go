package browsertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Session is one headless Chromium kept open across page loads, driven
// through the DevTools protocol over a pipe (--remote-debugging-pipe:
// Chromium reads NUL-terminated JSON commands on fd 3 and writes answers
// and events on fd 4). Unlike Run, it keeps cookies between loads, and it
// can fill in and submit a form as a person would.
type Session struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      *os.File // our end of Chromium's fd 3
	session string   // the page's DevTools session
	stderr  lockedBuffer

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpMessage
	events  chan cdpMessage
	readErr error
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// lockedBuffer is Chromium's standard error, written by exec's copier
// while a failing test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// cdpTimeout bounds each command and each page load.
const cdpTimeout = 60 * time.Second

// Start opens Chromium with one blank page, 1280x900; t's cleanup closes it.
func Start(t testing.TB, bin string) *Session {
	t.Helper()
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{t: t, in: cmdW, waiting: map[int]chan cdpMessage{}, events: make(chan cdpMessage, 256)}
	s.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--remote-debugging-pipe",
		"--user-data-dir="+t.TempDir(), "--window-size=1280,900", "about:blank")
	s.cmd.ExtraFiles = []*os.File{cmdR, outW}
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	cmdR.Close()
	outW.Close()
	go s.read(outR)
	t.Cleanup(s.close)

	var target struct {
		TargetID string `json:"targetId"`
	}
	s.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	s.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	s.session = attached.SessionID
	s.call(s.session, "Page.enable", nil, nil)
	s.call(s.session, "Emulation.setDeviceMetricsOverride",
		map[string]any{"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}, nil)
	return s
}

// read delivers Chromium's answers to their callers and keeps its events.
func (s *Session) read(r *os.File) {
	br := bufio.NewReader(r)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			s.mu.Lock()
			s.readErr = err
			for id, ch := range s.waiting {
				close(ch)
				delete(s.waiting, id)
			}
			s.mu.Unlock()
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		if m.ID != 0 {
			s.mu.Lock()
			ch := s.waiting[m.ID]
			delete(s.waiting, m.ID)
			s.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		select {
		case s.events <- m:
		default: // nobody waits for this many events
		}
	}
}

// call sends a command and decodes its result into out (when not nil).
func (s *Session) call(session, method string, params, out any) {
	s.t.Helper()
	s.mu.Lock()
	if s.readErr != nil {
		s.mu.Unlock()
		s.t.Fatalf("chromium %s: pipe closed (%v)\n%s", method, s.readErr, s.stderr.String())
	}
	s.nextID++
	id := s.nextID
	ch := make(chan cdpMessage, 1)
	s.waiting[id] = ch
	s.mu.Unlock()
	msg, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": orEmpty(params), "sessionId": session})
	if session == "" {
		msg, _ = json.Marshal(map[string]any{"id": id, "method": method, "params": orEmpty(params)})
	}
	if _, err := s.in.Write(append(msg, 0)); err != nil {
		s.t.Fatalf("chromium %s: %v", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			s.t.Fatalf("chromium %s: no answer, the browser went away\n%s", method, s.stderr.String())
		}
		if m.Error != nil {
			s.t.Fatalf("chromium %s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				s.t.Fatalf("chromium %s: %v", method, err)
			}
		}
	case <-time.After(cdpTimeout):
		s.t.Fatalf("chromium %s: no answer within %s", method, cdpTimeout)
	}
}

func orEmpty(params any) any {
	if params == nil {
		return struct{}{}
	}
	return params
}

// drainEvents forgets the events received so far.
func (s *Session) drainEvents() {
	for {
		select {
		case <-s.events:
		default:
			return
		}
	}
}

// waitLoad waits for the page's load event.
func (s *Session) waitLoad(what string) {
	s.t.Helper()
	deadline := time.After(cdpTimeout)
	for {
		select {
		case m := <-s.events:
			if m.Method == "Page.loadEventFired" && m.SessionID == s.session {
				return
			}
		case <-deadline:
			s.t.Fatalf("chromium: %s did not load within %s", what, cdpTimeout)
		}
	}
}

// Open loads url and waits until it has loaded.
func (s *Session) Open(url string) {
	s.t.Helper()
	s.drainEvents()
	var res struct {
		ErrorText string `json:"errorText"`
	}
	s.call(s.session, "Page.navigate", map[string]any{"url": url}, &res)
	if res.ErrorText != "" {
		s.t.Fatalf("chromium: open %s: %s", url, res.ErrorText)
	}
	s.waitLoad(url)
}

// Eval evaluates a JavaScript expression in the page, as the DevTools
// console does (the page's own Content-Security-Policy does not apply),
// and returns its value as JSON.
func (s *Session) Eval(expr string) json.RawMessage {
	s.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	s.call(s.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		s.t.Fatalf("chromium: %s: %s", expr, res.ExceptionDetails.Text)
	}
	return res.Result.Value
}

// DOM returns the document as the browser built it, like --dump-dom.
func (s *Session) DOM() string {
	s.t.Helper()
	var dom string
	if err := json.Unmarshal(s.Eval("document.documentElement.outerHTML"), &dom); err != nil {
		s.t.Fatalf("chromium: DOM: %v", err)
	}
	return "<!DOCTYPE html>\n" + dom
}

// Submit types value into the input with id field, as a person would, and
// clicks the button with id button; it waits for the page the form leads
// to.
func (s *Session) Submit(field, value, button string) {
	s.t.Helper()
	s.drainEvents()
	q := func(id string) string { b, _ := json.Marshal(id); return "document.getElementById(" + string(b) + ")" }
	s.Eval(q(field) + ".focus()")
	s.call(s.session, "Input.insertText", map[string]any{"text": value}, nil)
	s.Eval(q(button) + ".click()")
	s.waitLoad("the page after submitting " + field)
}

// Screenshot writes a PNG of the viewport to path.
func (s *Session) Screenshot(path string) {
	s.t.Helper()
	var res struct {
		Data string `json:"data"`
	}
	s.call(s.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &res)
	png, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		s.t.Fatalf("chromium: screenshot: %v", err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

// close ends the browser: Browser.close, then a kill if it lingers.
func (s *Session) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg, _ := json.Marshal(map[string]any{"id": 1 << 30, "method": "Browser.close", "params": struct{}{}})
	_, _ = s.in.Write(append(msg, 0))
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.in.Close()
	if s.t.Failed() {
		fmt.Fprintf(os.Stderr, "chromium stderr:\n%s\n", s.stderr.String())
	}
}
