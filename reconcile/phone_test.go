package reconcile

import (
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// logHook counts warnings by message.
type logHook struct {
	mu  sync.Mutex
	got map[string]int
}

func (h *logHook) Levels() []logrus.Level { return []logrus.Level{logrus.WarnLevel} }
func (h *logHook) Fire(e *logrus.Entry) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got[e.Message]++
	return nil
}
func (h *logHook) count(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for m, c := range h.got {
		if strings.HasPrefix(m, prefix) {
			n += c
		}
	}
	return n
}

func hookedLog() (*logrus.Entry, *logHook) {
	l := logrus.New()
	l.SetLevel(logrus.WarnLevel)
	l.SetOutput(discard{})
	h := &logHook{got: map[string]int{}}
	l.AddHook(h)
	return logrus.NewEntry(l), h
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestBadPhoneSyncsRecordWithoutIt runs the phones users type (issue 22)
// through the CSV connector: each record is created with its other
// fields, each bad phone is one field warning, logged once however many
// passes meet the unchanged record, and a changed value is reported anew.
func TestBadPhoneSyncsRecordWithoutIt(t *testing.T) {
	e := newEnv(t, 6, emulator.Options{})
	var hook *logHook
	e.log, hook = hookedLog()
	bad := map[string]string{"1": "n/a", "2": "0049 30 1234567", "3": "555-0100"}
	for i, v := range bad {
		e.rows[atoi(t, i)][4] = v
	}
	e.rows[4][4] = "415-555-0104 ext. 12" // an extension: the number syncs
	e.rows[5][4] = ""                     // blank: no phone, no warning
	e.writeCSV()
	if sum := e.run(); sum.Created != 6 || sum.Failed != 0 {
		t.Fatalf("summary %v, want 6 created, none failed", sum)
	}
	byExt := map[string][]string{} // externalId -> phones
	for _, c := range e.emu.Contacts() {
		var phones []string
		for _, p := range c.DefaultFields.PhoneNumbers {
			phones = append(phones, p.Value)
		}
		byExt[*c.ExternalID] = phones
		if r := e.rows[atoi(t, *c.ExternalID)]; deref(c.DefaultFields.LastName) != r[2] || len(c.DefaultFields.Emails) != 1 {
			t.Errorf("contact %s: %+v, want its other fields", *c.ExternalID, c.DefaultFields)
		}
	}
	want := map[string]string{"1": "", "2": "", "3": "", "4": "+14155550104", "5": "", "6": "+14155550006"}
	for ext, w := range want {
		if got := strings.Join(byExt[ext], ","); got != w {
			t.Errorf("contact %s phones %q, want %q", ext, got, w)
		}
	}
	ws, err := e.store.FieldWarnings.List("crm")
	if err != nil || len(ws) != 3 {
		t.Fatalf("field warnings %+v, %v; want 3", ws, err)
	}
	for _, w := range ws {
		if w.Value != bad[w.Key] || w.Field != "phoneNumbers.mobile" || w.From != "mobile" || w.RecordID == "" || !strings.Contains(w.Reason, "invalid phone number") {
			t.Errorf("warning %+v: want record %s's value %q on phoneNumbers.mobile", w, w.Key, bad[w.Key])
		}
	}
	if n := hook.count("field left out"); n != 3 {
		t.Fatalf("%d field warnings logged, want 3", n)
	}
	if n, _ := e.store.DeadLetters.Count("crm"); n != 0 {
		t.Fatalf("%d dead letters, want none", n)
	}

	// Unchanged records: no write, nothing logged again.
	for range 2 {
		if sum := e.run(); sum.Created+sum.Updated != 0 || sum.Failed != 0 {
			t.Fatalf("rerun: %v, want nothing written", sum)
		}
	}
	// Another field of a warned record changes: updated, not re-warned.
	e.rows[1][2] = "Changed"
	e.writeCSV()
	if sum := e.run(); sum.Updated != 1 {
		t.Fatalf("after an edit of another field: %v, want 1 updated", sum)
	}
	if n := hook.count("field left out"); n != 3 {
		t.Fatalf("%d field warnings logged after passes over unchanged values, want still 3", n)
	}
	// A changed bad value is reported once; a fixed one clears its
	// warning and reaches the workspace.
	e.rows[1][4] = "call me"
	e.rows[2][4] = "+49 30 1234567"
	e.writeCSV()
	e.run()
	e.run()
	if n := hook.count("field left out"); n != 4 {
		t.Fatalf("%d field warnings logged, want 4 (the changed value once)", n)
	}
	ws, _ = e.store.FieldWarnings.List("crm")
	if len(ws) != 2 || ws[0].Key != "1" || ws[0].Value != "call me" || ws[1].Key != "3" {
		t.Fatalf("warnings %+v, want records 1 (call me) and 3", ws)
	}
	for _, c := range e.emu.Contacts() {
		if *c.ExternalID == "2" && (len(c.DefaultFields.PhoneNumbers) != 1 || c.DefaultFields.PhoneNumbers[0].Value != "+49301234567") {
			t.Fatalf("fixed record's phones %+v, want +49301234567", c.DefaultFields.PhoneNumbers)
		}
	}
	// A record gone from the source takes its warning with it.
	e.policy, e.allow = "delete", true
	e.rows = append(e.rows[:3], e.rows[4:]...) // row 3 ("555-0100") removed
	e.writeCSV()
	e.run()
	if ws, _ := e.store.FieldWarnings.List("crm"); len(ws) != 1 || ws[0].Key != "1" {
		t.Fatalf("warnings %+v after record 3 was deleted, want record 1's only", ws)
	}
}

// TestOnInvalidDeadLetterLoggedOnce: with onInvalid: dead-letter, a bad
// phone sets its record aside as before, and its dead letter is logged
// once, not on every pass.
func TestOnInvalidDeadLetterLoggedOnce(t *testing.T) {
	e := newEnv(t, 3, emulator.Options{})
	var hook *logHook
	e.log, hook = hookedLog()
	spec := testSpec()
	fs := spec.Fields["phoneNumbers.mobile"]
	fs.OnInvalid = mapping.OnInvalidDeadLetter
	spec.Fields["phoneNumbers.mobile"] = fs
	e.spec = &spec
	e.rows[2][4] = "n/a"
	e.writeCSV()
	for range 3 {
		if sum := e.run(); sum.Failed != 1 {
			t.Fatalf("summary %v, want 1 failed", sum)
		}
	}
	dls, _ := e.store.DeadLetters.List("crm")
	if len(dls) != 1 || dls[0].Key != "2" || !strings.Contains(dls[0].Reason, `"n/a"`) {
		t.Fatalf("dead letters %+v, want record 2's naming its phone", dls)
	}
	if n := hook.count("record set aside"); n != 1 {
		t.Fatalf("dead letter logged %d times over 3 passes, want once", n)
	}
	if ws, _ := e.store.FieldWarnings.List("crm"); len(ws) != 0 {
		t.Fatalf("field warnings %+v, want none with onInvalid: dead-letter", ws)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("not a row number: %q", s)
		}
		n = n*10 + int(c-'0')
	}
	return n
}
