package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/hubspot"
	"github.com/syncd-io/syncd/connector/hubspot/hubspotemu"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

const hsSource = "custom-hubspot"

// hsEnv is a HubSpot test portal, a workspace emulator and a state file.
type hsEnv struct {
	*env
	crm    *hubspotemu.Server
	policy policy.Delete
}

func newHSEnv(t *testing.T, opts hubspotemu.Options) *hsEnv {
	e := newEnv(t, 0, emulator.Options{})
	opts.SearchPerSecond = -1
	crm := hubspotemu.NewServer(opts)
	t.Cleanup(crm.Close)
	return &hsEnv{env: e, crm: crm, policy: policy.DeleteIgnore}
}

// run makes one incremental pass of a hubspot connector on the portal.
func (e *hsEnv) run() (Summary, error) {
	e.t.Helper()
	m, err := mapping.Compile(mapping.Spec{Fields: map[string]mapping.FieldSpec{
		"firstName": {From: "firstname"}, "lastName": {From: "lastname"}, "emails.work": {From: "email"},
	}}, mapping.ToWorkspace, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	typ, _ := connector.Lookup(hubspot.TypeName)
	set := hubspot.NewSettings()
	set.Token, set.BaseURL = hubspot.Secret(e.crm.Token()), e.crm.URL
	set.RateLimit, set.SearchRateLimit = 100000, 100000
	src, err := hubspot.Open(context.Background(), connector.Options{Name: "hs", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		e.t.Fatal(err)
	}
	defer src.Close()
	r, err := New(Options{Connector: "hs", Source: hsSource, Type: typ, Reader: src, Mapper: m,
		Store: StoreOf(e.store), Workspace: e.ws, Workers: 4, OnSourceDelete: e.policy, AllowMassDelete: true,
		Backoff: time.Millisecond, MaxAttempts: 6, Log: quietLog()})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.Run(context.Background())
}

// contactsByExt returns the workspace contacts of the connector's source
// by externalId.
func (e *hsEnv) contactsByExt() map[string][]workspace.Contact {
	out := map[string][]workspace.Contact{}
	for _, c := range e.emu.Contacts() {
		if c.Source != nil && *c.Source == hsSource && c.ExternalID != nil {
			out[*c.ExternalID] = append(out[*c.ExternalID], c)
		}
	}
	return out
}

// TestHubSpotMergeRelinksContact merges two synced HubSpot contacts, as
// HubSpot does today (a new contact with a new id carrying
// hs_merged_object_ids) and as it did before (the primary keeps its id):
// the next incremental pass ends with one workspace contact for the
// merged contact, an existing one moved to it when it had none (no
// delete and new contact), and the other, now a duplicate, following
// onSourceDelete: deleted, unlinked or left as it was. So does a merge
// that the archived scan sees before search shows the merged contact.
func TestHubSpotMergeRelinksContact(t *testing.T) {
	for _, tc := range []struct {
		name     string
		legacy   bool
		onDelete policy.Delete
		// archived lists merged-away contacts as archived, and lag keeps
		// the merged contact out of search for that long: the archived
		// scan sees the merge first.
		archived bool
		lag      time.Duration
	}{
		{name: "new id, delete", onDelete: policy.DeleteRemove},
		{name: "new id, unlink", onDelete: policy.DeleteUnlink},
		{name: "new id, ignore", onDelete: policy.DeleteIgnore},
		{name: "primary kept, delete", legacy: true, onDelete: policy.DeleteRemove},
		{name: "primary kept, unlink", legacy: true, onDelete: policy.DeleteUnlink},
		{name: "new id listed archived before search shows it, delete", onDelete: policy.DeleteRemove, archived: true, lag: 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newHSEnv(t, hubspotemu.Options{Seed: 5, LegacyMerge: tc.legacy, ArchiveMerged: tc.archived, SearchLag: tc.lag})
			e.policy = tc.onDelete
			a := e.crm.Add(map[string]string{"firstname": "Ada", "lastname": "Lovelace", "email": "ada@example.com"})
			b := e.crm.Add(map[string]string{"firstname": "Ada", "lastname": "King", "email": "ada.king@example.com"})
			other := e.crm.Add(map[string]string{"firstname": "Alan", "lastname": "Turing", "email": "alan@example.com"})
			time.Sleep(tc.lag + 5*time.Millisecond)
			if sum, err := e.run(); err != nil || sum.Created != 3 {
				t.Fatalf("first pass: %v, %v", sum, err)
			}
			before := e.contactsByExt()
			contactA, contactB := before[a][0].ID, before[b][0].ID

			won, err := e.crm.Merge(b, a) // b is the primary
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond)
			sum, err := e.run()
			if err != nil {
				t.Fatal(err)
			}
			if tc.lag > 0 {
				// The merged contact's values come once search shows it.
				time.Sleep(tc.lag)
				more, err := e.run()
				if err != nil {
					t.Fatal(err)
				}
				sum.Created += more.Created
				sum.Deleted += more.Deleted
				sum.Relinked += more.Relinked
			}
			after := e.contactsByExt()
			if len(after[won]) != 1 {
				t.Fatalf("merged contact %s has workspace contacts %v, want one", won, after[won])
			}
			kept := after[won][0]
			if len(after[other]) != 1 {
				t.Errorf("the contact of %s, not merged, is gone: %v", other, keys(after))
			}
			if deref(kept.DefaultFields.LastName) != "King" {
				t.Errorf("the merged contact's lastName is %q, want the primary's King", deref(kept.DefaultFields.LastName))
			}
			// Which workspace contact the merged contact keeps, and what
			// becomes of the duplicate.
			survivor, dup := contactA, contactB // the older contact moves (ids ascending)
			wantRelinked := 1
			if tc.legacy {
				survivor, dup, wantRelinked = contactB, contactA, 0 // b kept its id and its contact
			}
			if kept.ID != survivor {
				t.Errorf("the merged contact's workspace contact is %s, want %s kept", kept.ID, survivor)
			}
			if sum.Created != 0 || sum.Relinked != wantRelinked {
				t.Errorf("merge pass %v, want nothing created, %d relinked", sum, wantRelinked)
			}
			dupLives := false
			for _, c := range e.emu.Contacts() {
				dupLives = dupLives || c.ID == dup
			}
			// The duplicate's record: a merged away in both cases but the
			// new id's first (a's contact moved, b's is the duplicate).
			dupRecord := a
			if !tc.legacy {
				dupRecord = b
			}
			_, dupLinked, _ := e.store.Links.Get("hs", dupRecord)
			switch tc.onDelete {
			case policy.DeleteRemove:
				if dupLives || dupLinked || sum.Deleted != 1 {
					t.Errorf("duplicate contact %s: exists %v, linked %v, pass %v; want it deleted", dup, dupLives, dupLinked, sum)
				}
			case policy.DeleteUnlink:
				if !dupLives || dupLinked || sum.Deleted != 0 {
					t.Errorf("duplicate contact %s: exists %v, linked %v, pass %v; want it kept, unlinked", dup, dupLives, dupLinked, sum)
				}
			case policy.DeleteIgnore:
				if !dupLives || sum.Deleted != 0 {
					t.Errorf("duplicate contact %s: exists %v, pass %v; want it left", dup, dupLives, sum)
				}
			}
			if got := len(e.emu.Contacts()); tc.onDelete == policy.DeleteRemove && got != 2 {
				t.Errorf("%d workspace contacts after the merge, want 2 (the merged contact and %s's)", got, other)
			}

			// A later pass reading the merged contact again changes nothing.
			if err := e.crm.Update(won, map[string]string{"firstname": "Augusta"}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(tc.lag + 5*time.Millisecond)
			sum, err = e.run()
			if err != nil {
				t.Fatal(err)
			}
			if sum.Created != 0 || sum.Deleted != 0 || sum.Relinked != 0 || sum.Updated != 1 {
				t.Errorf("pass after the merge %v, want only the merged contact updated", sum)
			}
		})
	}
}
