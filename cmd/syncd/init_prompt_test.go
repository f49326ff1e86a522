package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/syncd-io/syncd/internal/capture"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// scripted answers init's questions in order, each answer chosen by a
// fragment of its question, and records what was asked.
type scripted struct {
	t       *testing.T
	answers []answer
	asked   []string
	notes   []string
}

type answer struct{ question, value string }

func (s *scripted) next(q string) string {
	s.t.Helper()
	s.asked = append(s.asked, q)
	if len(s.answers) == 0 || !strings.Contains(q, s.answers[0].question) {
		want := "nothing"
		if len(s.answers) > 0 {
			want = fmt.Sprintf("%q", s.answers[0].question)
		}
		s.t.Fatalf("asked %q, want a question about %s", q, want)
	}
	v := s.answers[0].value
	s.answers = s.answers[1:]
	return v
}

func (s *scripted) Ask(q, def string) (string, error) {
	if v := s.next(q); v != "" {
		return v, nil
	}
	return def, nil
}

func (s *scripted) Secret(q string) (string, error) { return s.next(q), nil }
func (s *scripted) Note(line string)                { s.notes = append(s.notes, line) }

// TestInitAsksAndReviews: with a prompter, init asks for the type, the
// file, the workspace's address and API key, then lets each guess be
// kept, dropped or pointed at another field, and the region changed.
func TestInitAsksAndReviews(t *testing.T) {
	e := newInitEnv(t)
	delete(e.env, apiKeyEnv)
	csvPath := filepath.Join(e.dir, "people.csv")
	rows := "ref,vorname,family,work_mail,private_mail,cell,org\n" +
		"r1,Ada,Lovelace,ada@work.example,ada@home.example,020 7946 0018,Engines\n"
	if err := os.WriteFile(csvPath, []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(e.dir, "syncd.yaml")
	p := &scripted{t: t, answers: []answer{
		{"Connector type", "csv"},
		{`"path"`, csvPath},
		{"Workspace API address", e.emu.URL},
		{"Workspace API key", emulator.DefaultAPIKey},
		{`"idColumn"`, "ref"},
		{"firstName <- vorname", ""},
		{"lastName <- family", "n"},
		{"company <- org", "nope"},
		{"company <- org", "family"},
		{"emails.work <- work_mail", "y"},
		{"emails.home <- private_mail", ""},
		{"phoneNumbers.mobile <- cell", ""},
		{"Phone region", "ie"},
	}}
	out := e.must(p, "init", "--out", cfg)
	if len(p.answers) > 0 {
		t.Fatalf("init did not ask %q; it asked %q", p.answers[0].question, p.asked)
	}
	if len(p.notes) != 1 || !strings.Contains(p.notes[0], `no field "nope"`) {
		t.Errorf("notes %q, want one saying there is no field nope", p.notes)
	}
	data, _ := os.ReadFile(cfg)
	file := string(data)
	for _, want := range []string{
		"idColumn: ref",
		"firstName: vorname", "company: family # chosen at init",
		"emails.work: work_mail", "emails.home: private_mail",
		"phoneNumbers.mobile: {from: cell, transform: [e164], region: IE}",
		"family: proposed for lastName, dropped at init",
	} {
		if !strings.Contains(file, want) {
			t.Errorf("the file lacks %q:\n%s", want, file)
		}
	}
	if strings.Contains(file, "lastName:") || strings.Contains(file, emulator.DefaultAPIKey) {
		t.Fatalf("the file maps the dropped guess or holds the key:\n%s", file)
	}
	if !strings.Contains(out, "export WORKSPACE_API_KEY='emulator-key'") {
		t.Fatalf("init did not print the API key's export line:\n%s", out)
	}
}

// TestInitOnATerminal: stdin on a pseudo-terminal makes init ask, the API
// key without echo; the answers typed there make the file.
func TestInitOnATerminal(t *testing.T) {
	e := newInitEnv(t)
	delete(e.env, apiKeyEnv)
	csvPath := filepath.Join(e.dir, "people.csv")
	if err := os.WriteFile(csvPath, []byte("id,first_name,last_name,email\n1,Ada,Lovelace,ada@example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(e.dir, "syncd.yaml")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	var screen bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(&screen, ptmx) // the echo; ends when the terminal closes
	}()
	var out, errb capture.Buffer
	m := &Main{Stdin: tty, Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return e.env[k] }}
	done := make(chan error, 1)
	go func() {
		done <- m.Run(context.Background(), []string{"init", "--type", "csv", "--set", "path=" + csvPath, "--base-url", e.emu.URL, "--out", cfg})
	}()
	// The key is typed once init asks for it and has turned echo off, as
	// a person would; then Enter for each of the three guesses.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errb.String(), "not echoed") || echoOn(t, tty) {
		if time.Now().After(deadline) {
			t.Fatalf("init did not ask for the key with echo off:\n%s", errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := io.WriteString(ptmx, "emulator-key\n\n\n\n"); err != nil {
		t.Fatal(err)
	}
	err = <-done
	tty.Close()
	wg.Wait()
	if err != nil {
		t.Fatalf("init: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"Workspace API key (not echoed)", "firstName <- first_name", "emails.work <- email"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("init did not ask %q:\n%s", want, errb.String())
		}
	}
	if strings.Contains(screen.String(), "emulator-key") {
		t.Errorf("the API key was echoed: %q", screen.String())
	}
	data, _ := os.ReadFile(cfg)
	for _, want := range []string{"firstName: first_name", "lastName: last_name", "emails.work: email"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the file lacks %q:\n%s", want, data)
		}
	}
	if !strings.Contains(out.String(), "export WORKSPACE_API_KEY='emulator-key'") {
		t.Errorf("init did not print the key's export line:\n%s", out.String())
	}
}

// echoOn reports whether the terminal echoes what is typed.
func echoOn(t *testing.T, tty *os.File) bool {
	t.Helper()
	st, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatalf("read the terminal's mode: %v", err)
	}
	return st.Lflag&unix.ECHO != 0
}
