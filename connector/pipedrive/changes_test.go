package pipedrive

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
)

var errStop = errors.New("stop")

// readAll reads Changes from cp, stopping after stopAt batches when
// stopAt > 0; it returns the records and the last checkpoint.
func readAll(t *testing.T, src connector.Source, cp string, stopAt int) ([]connector.Record, string) {
	t.Helper()
	var recs []connector.Record
	n := 0
	err := src.Changes(context.Background(), cp, func(_ context.Context, b connector.Batch) error {
		recs = append(recs, b.Records...)
		if b.Checkpoint != "" {
			cp = b.Checkpoint
		}
		n++
		if stopAt > 0 && n == stopAt {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		t.Fatalf("Changes: %v", err)
	}
	return recs, cp
}

// TestChangesSharedUpdateTime reads 20,000 persons of which 3,000 share
// one update_time across pages of 500, stopping after a page that ends
// inside the shared group and resuming from its checkpoint, as after a
// crash: every person is read once, one list call a page. (The contract
// suite crashes after every batch of a smaller group.)
func TestChangesSharedUpdateTime(t *testing.T) {
	const total, shared, first = 20000, 3000, 8700
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(base)
	for i := range total {
		if i < first || i >= first+shared {
			srv.Advance(time.Second)
		}
		srv.Add(pipedriveemu.Person{Name: fmt.Sprintf("P %d", i), Emails: []pipedriveemu.Item{{Value: fmt.Sprintf("p%d@example.com", i), Label: "work"}}})
	}
	srv.Advance(time.Second)
	src := openOn(t, srv, MaxPageSize, []string{fieldName, "emails.work"})

	// The shared group runs from page 18 to page 24.
	head, cp := readAll(t, src, "", 21)
	tail, _ := readAll(t, src, cp, 0)
	wantOnce(t, "stop after page 21, resume", append(head, tail...), total)
	if got, want := srv.Stats().Requests[pipedriveemu.RouteListPersons], total/MaxPageSize; got != want {
		t.Errorf("%d list calls, want %d (one per page)", got, want)
	}
}

func wantOnce(t *testing.T, what string, recs []connector.Record, total int) {
	t.Helper()
	seen := make(map[string]int, len(recs))
	for i, r := range recs {
		seen[r.ID]++
		if i > 0 && r.UpdatedAt.Before(recs[i-1].UpdatedAt) {
			t.Fatalf("%s: record %s (%v) after a newer one", what, r.ID, r.UpdatedAt)
		}
	}
	if len(seen) != total || len(recs) != total {
		t.Fatalf("%s: %d records, %d distinct, want %d once each", what, len(recs), len(seen), total)
	}
}

// TestChangesDeletionsAndMerges: a deleted person comes as a Deleted
// record; a person merged into another as a Deleted record naming it,
// once, and the survivor's new values follow.
func TestChangesDeletionsAndMerges(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(base)
	a := srv.Add(pipedriveemu.Person{Name: "Ada Lovelace", Emails: []pipedriveemu.Item{{Value: "ada@example.com", Label: "work"}}})
	b := srv.Add(pipedriveemu.Person{Name: "Ada L.", Phones: []pipedriveemu.Item{{Value: "+15550001", Label: "mobile"}}})
	c := srv.Add(pipedriveemu.Person{Name: "Charles Babbage"})
	srv.Advance(time.Second)
	src := openOn(t, srv, 10, nil)
	_, cp := readAll(t, src, "", 0)

	srv.Advance(time.Second)
	if err := srv.Merge(b, a); err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete(c); err != nil {
		t.Fatal(err)
	}
	srv.Advance(time.Second)
	recs, cp := readAll(t, src, cp, 0)
	got := map[string]connector.Record{}
	for _, r := range recs {
		if _, dup := got[r.ID]; dup {
			t.Errorf("record %s read twice", r.ID)
		}
		got[r.ID] = r
	}
	if r := got[b]; !r.Deleted || r.MergedInto != a {
		t.Errorf("merged person %s: %+v, want Deleted, MergedInto %s", b, r, a)
	}
	if r := got[c]; !r.Deleted || r.MergedInto != "" {
		t.Errorf("deleted person %s: %+v, want Deleted", c, r)
	}
	if r := got[a]; r.Deleted || r.Fields["phones.mobile"] != "+15550001" || r.Fields["emails.work"] != "ada@example.com" {
		t.Errorf("survivor %s: %+v, want its merged lists", a, r)
	}
	if len(got) != 3 {
		t.Errorf("read %d records, want 3", len(got))
	}
	if again, _ := readAll(t, src, cp, 0); len(again) != 0 {
		t.Errorf("a read after that delivered %d records again", len(again))
	}
}

// TestFirstNameLastNameAndLists writes first_name and the work e-mail of
// a person with home and work e-mail addresses and a mobile phone: the
// name is composed, the home address and the phone survive.
func TestFirstNameLastNameAndLists(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	id := srv.Add(pipedriveemu.Person{Name: "Ada Lovelace", Emails: []pipedriveemu.Item{
		{Value: "ada@home.example", Label: "home", Primary: true}, {Value: "ada@work.example", Label: "work"},
	}, Phones: []pipedriveemu.Item{{Value: "+15550001", Label: "mobile"}}})
	src := openOn(t, srv, 10, []string{fieldFirstName, fieldLastName, "emails.work", "phones.work"})
	res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: id, Fields: map[string]any{
		fieldFirstName: "Augusta", "emails.work": "augusta@work.example", "phones.work": "+15550002",
	}}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("write: %v %v", err, res)
	}
	p, _ := srv.Get(id)
	if p.Name != "Augusta Lovelace" {
		t.Errorf("name %q, want Augusta Lovelace", p.Name)
	}
	want := []pipedriveemu.Item{{Value: "ada@home.example", Label: "home", Primary: true}, {Value: "augusta@work.example", Label: "work"}}
	if fmt.Sprint(p.Emails) != fmt.Sprint(want) {
		t.Errorf("emails %v, want %v", p.Emails, want)
	}
	wantPhones := []pipedriveemu.Item{{Value: "+15550001", Label: "mobile", Primary: true}, {Value: "+15550002", Label: "work"}}
	if fmt.Sprint(p.Phones) != fmt.Sprint(wantPhones) {
		t.Errorf("phones %v, want %v", p.Phones, wantPhones)
	}
	// The same write again sends nothing.
	before := srv.Stats().Requests[pipedriveemu.RouteUpdatePerson]
	if res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: id, Fields: map[string]any{fieldFirstName: "Augusta", "emails.work": "augusta@work.example"}}}); err != nil || res[0].Err != nil {
		t.Fatalf("repeat: %v %v", err, res)
	}
	if n := srv.Stats().Requests[pipedriveemu.RouteUpdatePerson] - before; n != 0 {
		t.Errorf("a repeated update made %d PATCH calls", n)
	}
}

// TestConditionalUpdate: an update conditional on the update_time read
// before is refused with ErrChanged, writing nothing, once the person
// changed meanwhile; with the current update_time it is applied.
func TestConditionalUpdate(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	srv.SetClock(base)
	id := srv.Add(pipedriveemu.Person{Name: "Ada Lovelace"})
	src := openOn(t, srv, 10, []string{fieldName})
	recs, err := src.Get(context.Background(), []string{id, "424242"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("get: %v %v", recs, err)
	}
	read := recs[0].UpdatedAt
	srv.Advance(time.Second)
	if err := srv.Edit(id, func(p *pipedriveemu.Person) { p.Name = "Ada King" }); err != nil {
		t.Fatal(err)
	}
	res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: id, Fields: map[string]any{fieldName: "Ada Byron"}, IfUnchangedSince: read}})
	if err != nil || !errors.Is(res[0].Err, connector.ErrChanged) {
		t.Fatalf("conditional update of a changed person: %v %v, want ErrChanged", err, res)
	}
	if p, _ := srv.Get(id); p.Name != "Ada King" {
		t.Errorf("name %q: the refused update wrote", p.Name)
	}
	res, err = src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: id, Fields: map[string]any{fieldName: "Ada Byron"}, IfUnchangedSince: base.Add(time.Second)}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("conditional update with the current update_time: %v %v", err, res)
	}
	if p, _ := srv.Get(id); p.Name != "Ada Byron" {
		t.Errorf("name %q, want Ada Byron", p.Name)
	}
}

// TestOrgNameWrittenThroughTheOrganization: org_name finds the
// organization by its exact name or creates it, and sets org_id; an empty
// name unlinks the person. Reads show the organization's name.
func TestOrgNameWrittenThroughTheOrganization(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	existing := srv.AddOrg("Analytical Engines")
	a := srv.Add(pipedriveemu.Person{Name: "Ada Lovelace"})
	b := srv.Add(pipedriveemu.Person{Name: "Alan Turing"})
	src := openOn(t, srv, 10, []string{fieldName, fieldOrgName})
	res, err := src.Write(context.Background(), []connector.Change{
		{Op: connector.OpUpdate, ID: a, Fields: map[string]any{fieldOrgName: "analytical engines"}},
		{Op: connector.OpUpdate, ID: b, Fields: map[string]any{fieldOrgName: "Bletchley Park"}},
		{Op: connector.OpCreate, Fields: map[string]any{fieldName: "Joan Clarke", fieldOrgName: "Bletchley Park"}},
	})
	if err != nil || res[0].Err != nil || res[1].Err != nil || res[2].Err != nil {
		t.Fatalf("write: %v %+v", err, res)
	}
	pa, _ := srv.Get(a)
	pb, _ := srv.Get(b)
	pc, _ := srv.Get(res[2].ID)
	if pa.OrgID != existing || pb.OrgID == 0 || pb.OrgID == existing || pc.OrgID != pb.OrgID {
		t.Errorf("org ids %d, %d, %d: want %d, a new one, the same new one", pa.OrgID, pb.OrgID, pc.OrgID, existing)
	}
	if n := srv.Stats().Requests[pipedriveemu.RouteAddOrg]; n != 1 {
		t.Errorf("%d organizations created, want 1", n)
	}
	recs, err := src.Get(context.Background(), []string{a, b})
	if err != nil || len(recs) != 2 || recs[0].Fields[fieldOrgName] != "Analytical Engines" || recs[1].Fields[fieldOrgName] != "Bletchley Park" {
		t.Fatalf("get: %+v %v", recs, err)
	}
	if res, err := src.Write(context.Background(), []connector.Change{{Op: connector.OpUpdate, ID: a, Fields: map[string]any{fieldOrgName: ""}}}); err != nil || res[0].Err != nil {
		t.Fatalf("clear: %v %+v", err, res)
	}
	if p, _ := srv.Get(a); p.OrgID != 0 {
		t.Errorf("org id %d after clearing org_name", p.OrgID)
	}
}

// TestCustomFields: option ids read as labels and labels write as ids; a
// number field takes the text's number; a value its field cannot take is
// the change's own failure, naming the field, and writes nothing.
func TestCustomFields(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{CustomFields: []pipedriveemu.CustomField{
		{Name: "Tier", Type: "enum", Options: []string{"Gold", "Silver"}}, {Name: "Score", Type: "double"},
		{Name: "Tags", Type: "set", Options: []string{"vip", "partner"}},
	}})
	t.Cleanup(srv.Close)
	tier, score, tags := srv.CustomFields()[0].Key, srv.CustomFields()[1].Key, srv.CustomFields()[2].Key
	id := srv.Add(pipedriveemu.Person{Name: "Ada", Custom: map[string]any{tier: int64(2), score: 1.5, tags: []int64{1, 2}}})
	src := openOn(t, srv, 10, []string{fieldName, customPrefix + tier, customPrefix + score, customPrefix + tags})
	recs, err := src.Get(context.Background(), []string{id})
	if err != nil || len(recs) != 1 {
		t.Fatal(recs, err)
	}
	f := recs[0].Fields
	if f[customPrefix+tier] != "Silver" || f[customPrefix+score] != 1.5 || fmt.Sprint(f[customPrefix+tags]) != "[vip partner]" {
		t.Errorf("custom fields read %v", f)
	}
	res, err := src.Write(context.Background(), []connector.Change{
		{Op: connector.OpUpdate, ID: id, Fields: map[string]any{customPrefix + tier: "gold", customPrefix + score: "42", customPrefix + tags: []string{"partner"}}},
		{Op: connector.OpUpdate, ID: id, Fields: map[string]any{customPrefix + score: "lots"}},
	})
	if err != nil || res[0].Err != nil {
		t.Fatalf("write: %v %+v", err, res)
	}
	var re *connector.RefusedError
	if !errors.As(res[1].Err, &re) || re.Field != customPrefix+score || !errors.Is(res[1].Err, connector.ErrRefused) {
		t.Errorf("a number field given %q: %v, want a refusal naming it", "lots", res[1].Err)
	}
	p, _ := srv.Get(id)
	if p.Custom[tier] != int64(1) || p.Custom[score] != 42.0 || fmt.Sprint(p.Custom[tags]) != "[2]" {
		t.Errorf("custom fields written %v", p.Custom)
	}
}

// TestTwoUpdatesOfOnePerson: two changes of one person in one Write
// build on each other; neither undoes the other's list item.
func TestTwoUpdatesOfOnePerson(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{})
	t.Cleanup(srv.Close)
	id := srv.Add(pipedriveemu.Person{Name: "Ada", Emails: []pipedriveemu.Item{{Value: "a@work.example", Label: "work"}}})
	src := openOn(t, srv, 10, []string{"emails.work", "emails.home"})
	res, err := src.Write(context.Background(), []connector.Change{
		{Op: connector.OpUpdate, ID: id, Fields: map[string]any{"emails.home": "a@home.example"}},
		{Op: connector.OpUpdate, ID: id, Fields: map[string]any{"emails.work": "b@work.example"}},
	})
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("write: %v %+v", err, res)
	}
	p, _ := srv.Get(id)
	if fmt.Sprint(p.Emails) != fmt.Sprint([]pipedriveemu.Item{{Value: "b@work.example", Label: "work", Primary: true}, {Value: "a@home.example", Label: "home"}}) {
		t.Errorf("emails %+v", p.Emails)
	}
}
