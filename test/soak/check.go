package soak

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/e2e"
)

// Final is what both sides hold once the run has drained: the live rows
// and the contacts, by key (e-mail).
type Final struct {
	Rows       map[string][]e2e.Row
	Contacts   map[string][]ContactValues
	RowIDs     map[string][]int64
	ContactIDs map[string][]string
}

// ContactValues is a contact's id and synced fields.
type ContactValues struct {
	ID string
	e2e.Values
}

// Kinds of finding.
const (
	KindLost         = "lost edit"
	KindDroppedAfter = "edit after delete dropped without a journal entry"
	KindDisagree     = "contact live on one side only"
	KindDuplicate    = "one person on several rows or contacts"
	// KindJournaled is a last edit that lost outside the race window
	// with a journal entry: the policy settled a conflict it should not
	// have met (an edit time misjudged). Counted as Journaled, listed so
	// that its timeline shows why.
	KindJournaled = "edit lost outside the race window, journaled"
)

// Finding is an edit that did not survive and is not excused.
type Finding struct {
	Kind  string
	Key   string
	Field string // "" for an edit after delete
	Edit  Edit
	// Got is the value each side holds (table, app) where it is not the
	// edit's.
	Got map[string]string
	// Winner is the edit whose value a side holds instead, when known.
	Winner *Edit
	// Delete is the other side's delete an edit came after.
	Delete *Edit
	// Later is, for a lost edit, the winner's side's next edit of another
	// field of the contact after the lost edit: a row's updated_at (or a
	// contact's updatedAt) it moved past the lost edit's time.
	Later *Edit
}

// Mechanism names the shape of a lost edit: which side's edit lost to
// which side's value, and how much older that value was.
func (f Finding) Mechanism() string {
	if f.Kind == KindDuplicate {
		return fmt.Sprintf("rows %s, contacts %s", f.Got[Table], f.Got[App])
	}
	if f.Kind == KindDisagree {
		live := "row"
		if f.Got[App] != "" {
			live = "contact"
		}
		if f.Delete == nil {
			return fmt.Sprintf("only the %s lives, no delete was made", live)
		}
		return fmt.Sprintf("only the %s lives after the %s's delete %.1fs after the %s's last %s", live, f.Delete.Side, f.Delete.At.Sub(f.Edit.At).Seconds(), f.Edit.Side, f.Edit.Op)
	}
	if f.Kind == KindDroppedAfter {
		return fmt.Sprintf("%s edit %.1fs after the %s's delete dropped", f.Edit.Side, f.Edit.At.Sub(f.Delete.At).Seconds(), f.Delete.Side)
	}
	if f.Winner == nil {
		return fmt.Sprintf("%s edit replaced by a value no logged edit made", f.Edit.Side)
	}
	age := "older"
	if f.Winner.At.After(f.Edit.At) {
		age = "newer?"
	}
	m := fmt.Sprintf("%s edit lost to an %s %s value", f.Edit.Side, age, f.Winner.Side)
	if f.Later != nil {
		m += fmt.Sprintf(", the %s's edit of another field coming after it", f.Later.Side)
	}
	if f.Kind == KindJournaled {
		m += " (journaled)"
	}
	return m
}

// Result is the check's count of what happened to the edits.
type Result struct {
	// Fields is the number of (contact, field) pairs checked on contacts
	// live on both sides; each ends in one of Survived, Races, Journaled
	// or Lost.
	Fields, Survived, Races, Journaled, Lost int
	// AfterDelete counts edits made after the other side's delete: within
	// the race window (Races), applied (the contact lives on both sides),
	// journaled, or Dropped.
	AfterDelete struct{ Races, Applied, Journaled, Dropped int }
	// Disagree counts contacts live on one side only (e2e.Agree says
	// more); Duplicates lists keys held by more than one row or contact.
	Disagree   int
	Duplicates []string
	Findings   []Finding
}

// Failed reports whether the result breaks a promise. An edit lost
// outside the race window breaks it even when the journal names it: the
// journal excuses only a loss within the window (issue 35).
func (r Result) Failed() bool {
	return r.Lost > 0 || r.Journaled > 0 || r.AfterDelete.Dropped > 0 || r.Disagree > 0 || len(r.Duplicates) > 0
}

// Check compares the logged edits with what both sides hold at the end.
// race is the window within which edits of both sides are a true race,
// which the conflict policy may settle either way; journal is the
// connector's conflict journal.
func Check(edits []Edit, final Final, journal []state.Conflict, race time.Duration) Result {
	var r Result
	byKey := map[string][]Edit{}
	var keys []string
	for _, e := range edits {
		if _, ok := byKey[e.Key]; !ok {
			keys = append(keys, e.Key)
		}
		byKey[e.Key] = append(byKey[e.Key], e)
	}
	byValue := map[string]Edit{}
	for _, e := range edits {
		for _, v := range e.Values {
			byValue[v] = e
		}
	}
	for k := range final.Rows {
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
	}
	for k := range final.Contacts {
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	keys = uniq(keys)
	for _, key := range keys {
		rows, contacts := final.Rows[key], final.Contacts[key]
		if len(rows) > 1 || len(contacts) > 1 {
			r.Duplicates = append(r.Duplicates, fmt.Sprintf("%s: %d live rows %v, %d contacts %v", key, len(rows), final.RowIDs[key], len(contacts), final.ContactIDs[key]))
		}
		es := byKey[key]
		sort.SliceStable(es, func(i, j int) bool { return es[i].At.Before(es[j].At) })
		if (len(rows) > 1 || len(contacts) > 1) && len(es) > 0 {
			r.Findings = append(r.Findings, Finding{Kind: KindDuplicate, Key: key, Edit: es[len(es)-1],
				Got: map[string]string{Table: fmt.Sprint(final.RowIDs[key]), App: fmt.Sprint(final.ContactIDs[key])}})
		}
		j := journalOf(key, es, final, journal)
		switch {
		case len(rows) > 0 && len(contacts) > 0:
			r.countAfterDelete(es, race, true, j)
			for _, f := range Fields {
				r.checkField(key, f, es, rows[0].Values, contacts[0].Values, j, byValue, race)
			}
		case len(rows) == 0 && len(contacts) == 0:
			r.countAfterDelete(es, race, false, j)
		default:
			r.Disagree++
			fd := Finding{Kind: KindDisagree, Key: key, Got: map[string]string{Table: fmt.Sprint(final.RowIDs[key]), App: fmt.Sprint(final.ContactIDs[key])}}
			if len(contacts) == 0 {
				fd.Got[App] = ""
			} else {
				fd.Got[Table] = ""
			}
			for i := range es {
				if es[i].Op == OpDelete {
					fd.Delete = &es[i]
				} else {
					fd.Edit = es[i]
				}
			}
			r.Findings = append(r.Findings, fd)
		}
	}
	sort.SliceStable(r.Findings, func(a, b int) bool { return r.Findings[a].Edit.At.Before(r.Findings[b].Edit.At) })
	return r
}

// countAfterDelete counts the edits made after the other side's first
// delete; live tells whether the contact lives on both sides at the end
// (the edit was applied, its value checked by checkField).
func (r *Result) countAfterDelete(es []Edit, race time.Duration, live bool, j []state.Conflict) {
	firstDelete := map[string]*Edit{}
	for i := range es {
		if es[i].Op == OpDelete && firstDelete[es[i].Side] == nil {
			firstDelete[es[i].Side] = &es[i]
		}
	}
	for i, e := range es {
		if e.Op != OpEdit {
			continue
		}
		d := firstDelete[other(e.Side)]
		if d == nil || !e.At.After(d.At) {
			continue
		}
		if ownDeleteAfter(es[i+1:], e.Side) {
			continue // its own side deleted it later: the delete is the newer change
		}
		switch {
		case e.At.Sub(d.At) <= race:
			r.AfterDelete.Races++
		case live:
			r.AfterDelete.Applied++
		case journaledSince(j, d.At):
			r.AfterDelete.Journaled++
		default:
			r.AfterDelete.Dropped++
			r.Findings = append(r.Findings, Finding{Kind: KindDroppedAfter, Key: e.Key, Edit: e, Delete: d})
		}
	}
}

func ownDeleteAfter(later []Edit, side string) bool {
	for _, e := range later {
		if e.Side == side && e.Op == OpDelete {
			return true
		}
	}
	return false
}

// checkField checks that the last edit of field f survived on both
// sides (table row values t, contact values a).
func (r *Result) checkField(key, f string, es []Edit, t, a e2e.Values, j []state.Conflict, byValue map[string]Edit, race time.Duration) {
	// A contact deleted on one side and made again from the other
	// (editAfterDelete: edit-wins) holds what the surviving side held:
	// only the edits after the first delete must have survived, and an
	// edit its own side deleted later went with that delete.
	var firstDelete time.Time
	for _, e := range es {
		if e.Op == OpDelete {
			firstDelete = e.At
			break
		}
	}
	var last *Edit
	for i := range es {
		if _, ok := es[i].Values[f]; ok && !ownDeleteAfter(es[i+1:], es[i].Side) && es[i].At.After(firstDelete) {
			last = &es[i]
		}
	}
	if last == nil {
		return
	}
	r.Fields++
	want := last.Values[f]
	got := map[string]string{}
	if v := field(t, f); v != want {
		got[Table] = v
	}
	if v := field(a, f); v != want {
		got[App] = v
	}
	switch {
	case len(got) == 0:
		r.Survived++
	case keptNewer(es, *last, f, got, t, a):
		r.Survived++
	case raced(es, *last, f, race):
		r.Races++
	default:
		fd := Finding{Kind: KindLost, Key: key, Field: f, Edit: *last, Got: got}
		for _, v := range got {
			if w, ok := byValue[v]; ok {
				fd.Winner = &w
				break
			}
		}
		if fd.Winner != nil {
			fd.Later = laterEdit(es, *last, fd.Winner.Side, f)
		}
		if journaledValue(j, f, want) {
			r.Journaled++
			fd.Kind = KindJournaled
		} else {
			r.Lost++
		}
		r.Findings = append(r.Findings, fd)
	}
}

// keptNewer reports whether both sides hold, instead of last's value of
// f, the value of a later edit of f that its own side's later delete set
// aside (ownDeleteAfter): syncd had carried that newer edit to the other
// side before the delete, and the contact made again from the other
// side holds it. No edit is lost then: the newest edit of the field
// survived on both sides (the hour-long runs' "newer?" findings, both
// sides holding an app edit made 96 and 116 s after the table's).
func keptNewer(es []Edit, last Edit, f string, got map[string]string, t, a e2e.Values) bool {
	v := field(t, f)
	if v != field(a, f) || len(got) != 2 {
		return false
	}
	for i, e := range es {
		if !e.At.After(last.At) || e.Op == OpDelete {
			continue
		}
		if nv, ok := e.Values[f]; ok && nv == v && ownDeleteAfter(es[i+1:], e.Side) {
			return true
		}
	}
	return false
}

// laterEdit returns side's first edit of a field other than f after
// last, nil when none.
func laterEdit(es []Edit, last Edit, side, f string) *Edit {
	for i := range es {
		e := es[i]
		if e.Side != side || !e.At.After(last.At) || e.Op != OpEdit {
			continue
		}
		if _, same := e.Values[f]; !same {
			return &e
		}
	}
	return nil
}

// raced reports whether the other side edited f within race of last.
func raced(es []Edit, last Edit, f string, race time.Duration) bool {
	for _, e := range es {
		if _, ok := e.Values[f]; !ok || e.Side == last.Side {
			continue
		}
		if d := e.At.Sub(last.At); d <= race && d >= -race {
			return true
		}
	}
	return false
}

// journalOf returns the journal entries naming the contact of key (any
// row or contact it was ever held by).
func journalOf(key string, es []Edit, final Final, journal []state.Conflict) []state.Conflict {
	rows, contacts := map[string]bool{}, map[string]bool{}
	for _, e := range es {
		if e.Row != 0 {
			rows[strconv.FormatInt(e.Row, 10)] = true
		}
		if e.Contact != "" {
			contacts[e.Contact] = true
		}
	}
	for _, id := range final.RowIDs[key] {
		rows[strconv.FormatInt(id, 10)] = true
	}
	for _, id := range final.ContactIDs[key] {
		contacts[id] = true
	}
	var out []state.Conflict
	for _, c := range journal {
		if rows[c.ExternalID] || (c.ContactID != "" && contacts[c.ContactID]) {
			out = append(out, c)
		}
	}
	return out
}

func journaledValue(j []state.Conflict, f, v string) bool {
	for _, c := range j {
		if c.Workspace[f] == v || c.Source[f] == v {
			return true
		}
	}
	return false
}

func journaledSince(j []state.Conflict, at time.Time) bool {
	for _, c := range j {
		if !c.At.Before(at.Add(-time.Second)) {
			return true
		}
	}
	return false
}

func field(v e2e.Values, f string) string {
	switch f {
	case "firstName":
		return v.First
	case "lastName":
		return v.Last
	case "company":
		return v.Company
	}
	panic("soak: no field " + f)
}

func other(side string) string {
	if side == Table {
		return App
	}
	return Table
}

func uniq(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
