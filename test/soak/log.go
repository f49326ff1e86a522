package soak

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"
)

// Sides of an edit.
const (
	Table = "table"
	App   = "app"
)

// Ops of an edit.
const (
	OpEdit   = "edit"
	OpCreate = "create"
	OpDelete = "delete"
)

// Fields are the contact fields the soak edits, by their mapping names,
// with the table's columns.
var Fields = []string{"firstName", "lastName", "company"}

// Columns maps Fields to the table's columns.
var Columns = map[string]string{"firstName": "first_name", "lastName": "last_name", "company": "company"}

// Edit is one acknowledged change: its commit returned (table) or its
// answer was a 2xx (app).
type Edit struct {
	Seq  int
	At   time.Time
	Side string
	Op   string
	// Key is the contact's e-mail: never edited, so it names the contact
	// across both sides and recreations.
	Key string
	// Values are the fields set (an edit sets one, a create all).
	Values map[string]string
	// Row and Contact are the handles the edit went through (0 and ""
	// when not known on that side).
	Row     int64
	Contact string
}

// Event is something that happened to syncd (a kill, a restart) or to
// the run (the edits stop).
type Event struct {
	At   time.Time
	What string
}

// Log records acknowledged edits and events, in memory and as text lines
// to a writer, with times relative to Start.
type Log struct {
	Start  time.Time
	mu     sync.Mutex
	edits  []Edit
	events []Event
	w      io.Writer
}

// NewLog starts a log writing lines to w (nil: none).
func NewLog(start time.Time, w io.Writer) *Log {
	return &Log{Start: start, w: w}
}

// Add records an acknowledged edit and returns it with its sequence.
func (l *Log) Add(e Edit) Edit {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = len(l.edits) + 1
	l.edits = append(l.edits, e)
	if l.w != nil {
		fmt.Fprintln(l.w, l.FormatEdit(e))
	}
	return e
}

// Event records an event.
func (l *Log) Event(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := Event{At: time.Now(), What: what}
	l.events = append(l.events, ev)
	if l.w != nil {
		fmt.Fprintf(l.w, "%s %s\n", l.Stamp(ev.At), what)
	}
}

// Edits returns the edits so far, in order of acknowledgement.
func (l *Log) Edits() []Edit {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]Edit(nil), l.edits...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// Events returns the events so far.
func (l *Log) Events() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.events...)
}

// Stamp formats t as seconds since the start and the wall clock.
func (l *Log) Stamp(t time.Time) string {
	return fmt.Sprintf("t=%8.3fs (%s)", t.Sub(l.Start).Seconds(), t.UTC().Format("15:04:05.000"))
}

// FormatEdit is one line describing e.
func (l *Log) FormatEdit(e Edit) string {
	var vals string
	for _, f := range Fields {
		if v, ok := e.Values[f]; ok {
			vals += fmt.Sprintf(" %s=%s", f, v)
		}
	}
	return fmt.Sprintf("%s #%d %s %s %s%s (row %d, contact %s)", l.Stamp(e.At), e.Seq, e.Side, e.Op, e.Key, vals, e.Row, e.Contact)
}
