package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// Prompter asks the operator one question at a time (syncd init).
type Prompter interface {
	// Ask shows question and returns the answer line; an empty answer
	// returns def.
	Ask(question, def string) (string, error)
	// Secret asks for a value that is not echoed.
	Secret(question string) (string, error)
	// Note shows a line that needs no answer.
	Note(line string)
}

// linePrompter asks on out and reads lines from in; fd, when it is a
// terminal, reads secrets without echo.
type linePrompter struct {
	in  *bufio.Reader
	out io.Writer
	fd  int
}

// terminalPrompter returns a prompter on the Main's streams when stdin is
// a terminal, nil otherwise.
func terminalPrompter(m *Main) Prompter {
	f, ok := m.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &linePrompter{in: bufio.NewReader(f), out: m.Stderr, fd: int(f.Fd())}
}

func (p *linePrompter) Ask(question, def string) (string, error) {
	if def != "" {
		fmt.Fprintf(p.out, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(p.out, "%s: ", question)
	}
	line, err := p.in.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", fmt.Errorf("read answer: %w", err)
	}
	if line = strings.TrimRight(line, "\r\n"); line == "" {
		return def, nil
	}
	return line, nil
}

func (p *linePrompter) Secret(question string) (string, error) {
	fmt.Fprintf(p.out, "%s: ", question)
	b, err := term.ReadPassword(p.fd)
	fmt.Fprintln(p.out)
	if err != nil {
		return "", fmt.Errorf("read answer: %w", err)
	}
	return string(b), nil
}

func (p *linePrompter) Note(line string) { fmt.Fprintln(p.out, line) }
