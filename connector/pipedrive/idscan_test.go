package pipedrive

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector/pipedrive/pipedriveemu"
)

// TestIDScanFindsDeletions: with a recents feed that shows no deleted
// person and no merge trace, the id scan (what Pipedrive documents: a
// deleted person leaves the listing) emits each person gone since the
// last scan once as Deleted: one deleted in the app, one merged into
// another whose later edit cleared merge_what_id, and one created and
// read after the last scan, then deleted. The known ids survive in the
// checkpoint (a new connector resumes from it), and a scan due later
// emits nothing again.
func TestIDScanFindsDeletions(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{RecentsOmitDeleted: true})
	t.Cleanup(srv.Close)
	srv.SetClock(base)
	var ids []string
	for i := range 6 {
		ids = append(ids, srv.Add(pipedriveemu.Person{Name: fmt.Sprint("P ", i), Emails: []pipedriveemu.Item{{Value: fmt.Sprintf("p%d@example.com", i), Label: "work"}}}))
	}
	srv.Advance(time.Second)
	open := func() *Source {
		src := openOn(t, srv, 2, nil)
		src.idScanInterval = time.Hour
		return src
	}
	src := open()
	_, cp := readAll(t, src, "", 0) // the first read: every person, no scan

	srv.Advance(time.Minute)
	late := srv.Add(pipedriveemu.Person{Name: "Late"})
	srv.Advance(time.Second)
	_, cp = readAll(t, src, cp, 0) // reads late; the scan is not due
	if err := srv.Delete(ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := srv.Merge(ids[2], ids[3]); err != nil {
		t.Fatal(err)
	}
	srv.Advance(time.Second)
	if err := srv.Edit(ids[3], func(p *pipedriveemu.Person) { p.Name = "P 3 edited" }); err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete(late); err != nil {
		t.Fatal(err)
	}
	srv.Advance(time.Hour)
	lists := srv.Stats().Requests[pipedriveemu.RouteListPersons]
	recs, cp := readAll(t, open(), cp, 0) // a new connector: the known ids come from the checkpoint
	var deleted []string
	for _, r := range recs {
		if r.Deleted {
			deleted = append(deleted, r.ID)
			if r.MergedInto != "" {
				t.Errorf("%s merged into %s: no trace was left", r.ID, r.MergedInto)
			}
		}
	}
	slices.Sort(deleted)
	if want := []string{ids[1], ids[2], late}; !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
	// 4 live persons, 2 a page: 2 scan calls and the window's.
	if n := srv.Stats().Requests[pipedriveemu.RouteListPersons] - lists; n > 4 {
		t.Errorf("%d list calls for the scan and the window, want at most 4", n)
	}
	srv.Advance(time.Hour)
	again, _ := readAll(t, src, cp, 0)
	for _, r := range again {
		if r.Deleted {
			t.Errorf("a later scan emitted %s again", r.ID)
		}
	}
}

// TestKnownIDsEncoding: the known ids round-trip through their encoding,
// and 20,000 ids with gaps take a few kilobytes of checkpoint.
func TestKnownIDsEncoding(t *testing.T) {
	tests := []struct {
		name string
		ids  []int64
	}{
		{name: "none"},
		{name: "one", ids: []int64{42}},
		{name: "gaps and large ids", ids: []int64{1, 2, 3, 10, 1 << 40}},
		{name: "20,000 with every 7th gone", ids: func() []int64 {
			var out []int64
			for i := int64(1); len(out) < 20000; i++ {
				if i%7 != 0 {
					out = append(out, i)
				}
			}
			return out
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := encodeIDs(tt.ids)
			got, err := decodeIDs(enc)
			if err != nil || !slices.Equal(got, tt.ids) {
				t.Fatalf("decode: %v %v, want %v", len(got), err, len(tt.ids))
			}
			if len(enc) > 4096 {
				t.Errorf("%d ids take %d bytes", len(tt.ids), len(enc))
			}
			t.Logf("%d ids: %d bytes", len(tt.ids), len(enc))
		})
	}
	if _, err := decodeIDs("not base64!"); err == nil {
		t.Error("a damaged encoding decoded")
	}
}

// TestSurvivor: after an id scan that found deletions, a deleted
// person's e-mail address or phone number (as its contact has them: the
// phone in E.164) names the one live person holding it; none or several
// name none, and so does a read whose scan found nothing.
func TestSurvivor(t *testing.T) {
	srv := pipedriveemu.NewServer(pipedriveemu.Options{RecentsOmitDeleted: true})
	t.Cleanup(srv.Close)
	srv.SetClock(base)
	gone := srv.Add(pipedriveemu.Person{Name: "Gone"})
	kept := srv.Add(pipedriveemu.Person{Name: "Kept", Emails: []pipedriveemu.Item{{Value: "Ada@Example.com", Label: "work"}},
		Phones: []pipedriveemu.Item{{Value: "(415) 555-0100", Label: "mobile"}}})
	srv.Add(pipedriveemu.Person{Name: "Twin A", Emails: []pipedriveemu.Item{{Value: "twin@example.com", Label: "work"}}})
	srv.Add(pipedriveemu.Person{Name: "Twin B", Emails: []pipedriveemu.Item{{Value: "twin@example.com", Label: "home"}}})
	srv.Advance(time.Second)
	src := openOn(t, srv, 10, nil)
	src.idScanInterval = 0
	_, cp := readAll(t, src, "", 0)
	if id, _ := src.Survivor(t.Context(), gone, []string{"ada@example.com"}, nil); id != "" {
		t.Errorf("before any scan found a deletion: survivor %q", id)
	}
	if err := srv.Delete(gone); err != nil {
		t.Fatal(err)
	}
	srv.Advance(time.Second)
	readAll(t, src, cp, 0)
	tests := []struct {
		name           string
		emails, phones []string
		want           string
	}{
		{name: "e-mail, another case", emails: []string{"ada@example.com"}, want: kept},
		{name: "phone in E.164", phones: []string{"+14155550100"}, want: kept},
		{name: "held by two persons", emails: []string{"twin@example.com"}},
		{name: "held by none", emails: []string{"nobody@example.com"}, phones: []string{"+4930123456"}},
		{name: "two keys of two persons", emails: []string{"ada@example.com", "twin@example.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := src.Survivor(t.Context(), gone, tt.emails, tt.phones); err != nil || got != tt.want {
				t.Errorf("survivor %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
