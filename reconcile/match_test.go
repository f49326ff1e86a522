package reconcile

import (
	"context"
	"fmt"
	"testing"

	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// handMade creates contacts the way a person does in the app: no source,
// no externalId, the phone under the "mobile" label.
func (e *env) handMade(contacts []workspace.ContactCreate) []string {
	e.t.Helper()
	ids := make([]string, 0, len(contacts))
	for _, c := range contacts {
		ids = append(ids, emutest.NewApp(e.t, e.emu.URL).Create(c).ID)
	}
	return ids
}

func handPhone(i int) string { return fmt.Sprintf("+1415200%04d", i) }
func handEmail(i int) string { return fmt.Sprintf("hand%d@example.com", i) }

// matchScenario is the workspace: 5,000 hand-made contacts and a
// source of 6,000 records, 4,000 of which share a phone (written in
// another format) or an e-mail (in other case) with one of them, 50 of
// those ambiguously.
func matchScenario(t *testing.T) *env {
	e := newEnv(t, 0, emulator.Options{})
	e.match = []string{MatchPhone, MatchEmail}
	// Up to 3950 a contact has either a phone (odd) or an e-mail (even);
	// the contacts that the ambiguous records point at have both.
	var hand []workspace.ContactCreate
	for i := 1; i <= 5000; i++ {
		df := workspace.DefaultFieldsInput{FirstName: fmt.Sprintf("First%d", i), LastName: fmt.Sprintf("Last%d-v1", i)}
		if i%2 == 1 || i > 3950 {
			df.PhoneNumbers = []workspace.Item{{Name: "mobile", Value: handPhone(i)}}
		}
		if i%2 == 0 || i > 3950 {
			df.Emails = []workspace.Item{{Name: "home", Value: handEmail(i)}}
		}
		hand = append(hand, workspace.ContactCreate{DefaultFields: df})
	}
	e.handMade(hand)

	mk := func(id int, phone, email string) []string {
		return []string{fmt.Sprint(id), fmt.Sprintf("First%d", id), fmt.Sprintf("Last%d-v1", id), email, phone, fmt.Sprint(id % 7)}
	}
	other := func(i int) (string, string) { // matches no hand-made contact
		return fmt.Sprintf("+1650300%04d", i), fmt.Sprintf("new%d@example.com", i)
	}
	localFormat := func(i int) string { return fmt.Sprintf("(415) 200-%04d", i) }
	upper := func(i int) string { return fmt.Sprintf("  HAND%d@Example.COM ", i) }
	for r := 1; r <= 6000; r++ {
		p, m := other(r)
		switch {
		case r <= 3950 && r%2 == 1: // shares the phone, in another format
			p = localFormat(r)
		case r <= 3950: // shares the e-mail, in other case
			m = upper(r)
		case r <= 3975: // phone of one contact, e-mail of another
			p, m = localFormat(r), upper(r+50)
		case r <= 3987: // two records for one contact: r and r+12
			p = localFormat(4026 + r - 3976)
		case r <= 3999:
			p = localFormat(4026 + r - 3988)
		case r == 4000:
			p, m = localFormat(4038), upper(4039)
		}
		e.rows = append(e.rows, mk(r, p, m))
	}
	e.writeCSV()
	return e
}

func TestMatchAdoptsExistingContacts(t *testing.T) {
	e := matchScenario(t)
	before := e.emu.Stats()
	sum := e.run()
	posts, patches, deletes := e.writes(before)
	if sum.Adopted != 3950 || sum.Created != 2000 || sum.Held != 50 {
		t.Fatalf("first sync: %v; want 3950 adopted, 2000 created, 50 held", sum)
	}
	if patches != 3950 || posts != 2000 || deletes != 0 {
		t.Errorf("first sync wrote %d PATCH, %d POST, %d DELETE; want 3950, 2000, 0", patches, posts, deletes)
	}
	pages := e.emu.Stats().Requests["GET /v1/contacts"] - before.Requests["GET /v1/contacts"]
	if pages > 101 {
		t.Errorf("listed %d pages, want about 100 (5,000 contacts, 50 a page)", pages)
	}
	if sum.APICalls > 100+3950+2000+5 {
		t.Errorf("first sync made %d API calls, want close to %d", sum.APICalls, 100+3950+2000)
	}
	held, err := e.store.Matches.Held("crm")
	if err != nil || len(held) != 50 {
		t.Fatalf("held records: %d (%v), want 50", len(held), err)
	}
	e.assertNoDuplicates(5000 + 2000)

	// A second run changes nothing.
	before = e.emu.Stats()
	sum = e.run()
	if posts, patches, deletes := e.writes(before); posts+patches+deletes != 0 {
		t.Fatalf("second run wrote %d/%d/%d (summary %v); want nothing", posts, patches, deletes, sum)
	}

	// Neither does a resync after the state file is lost.
	e.loseState()
	before = e.emu.Stats()
	if _, err := e.reconciler().Resync(context.Background(), ResyncOptions{}); err != nil {
		t.Fatal(err)
	}
	if posts, patches, deletes := e.writes(before); posts+patches+deletes != 0 {
		t.Fatalf("resync after lost state wrote %d/%d/%d; want nothing", posts, patches, deletes)
	}
	if held, _ := e.store.Matches.Held("crm"); len(held) != 50 {
		t.Errorf("after the resync %d records are held, want the same 50", len(held))
	}
	e.assertNoDuplicates(5000 + 2000)
}

// assertNoDuplicates checks the workspace's contact count and that no
// phone number is on two contacts.
func (e *env) assertNoDuplicates(want int) {
	e.t.Helper()
	cs := e.emu.Contacts()
	if len(cs) != want {
		e.t.Errorf("workspace holds %d contacts, want %d", len(cs), want)
	}
	seen := map[string]string{}
	for _, c := range cs {
		for _, p := range c.DefaultFields.PhoneNumbers {
			if other, dup := seen[p.Value]; dup && other != c.ID {
				e.t.Errorf("phone %s on contacts %s and %s", p.Value, other, c.ID)
			}
			seen[p.Value] = c.ID
		}
		if len(c.DefaultFields.PhoneNumbers) > 1 {
			e.t.Errorf("contact %s has %d phone numbers after adoption: %+v", c.ID, len(c.DefaultFields.PhoneNumbers), c.DefaultFields.PhoneNumbers)
		}
	}
}
