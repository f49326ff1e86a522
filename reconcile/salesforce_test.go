package reconcile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/connector/salesforce"
	"github.com/syncd-io/syncd/connector/salesforce/salesforceemu"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

const sfSource = "custom-salesforce"

// sfEnv is a Salesforce test org, a workspace emulator and a state file.
type sfEnv struct {
	*env
	// ws, when set, replaces the workspace client the reconciler gets.
	wsWrap   func(Workspace) Workspace
	org      *salesforceemu.Server
	policy   policy.Delete
	pageSize int // query batch size; 0: the connector's default
}

func newSFEnv(t *testing.T) *sfEnv {
	e := newEnv(t, 0, emulator.Options{})
	// The 25,000-record pass should not wait on a client-side limit.
	ws, err := workspace.NewClient(workspace.ClientOptions{BaseURL: e.emu.URL, APIKey: "test-key", RateLimit: 1e6, Burst: 1000, MaxRetries: 8, Log: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	e.ws = ws
	org := salesforceemu.NewServer(salesforceemu.Options{})
	t.Cleanup(org.Close)
	return &sfEnv{env: e, org: org, policy: policy.DeleteIgnore}
}

func sfContact(i int) map[string]any {
	return map[string]any{"FirstName": fmt.Sprint("Ada", i), "LastName": fmt.Sprint("Lovelace", i),
		"Email": fmt.Sprintf("ada%d@example.com", i), "Phone": fmt.Sprintf("+1415555%04d", i%10000)}
}

// source opens the connector on the org, its read windows on the org's
// clock; wrap may replace the reader the reconciler gets.
func (e *sfEnv) run(wrap func(connector.Source) connector.Source) (Summary, error) {
	e.t.Helper()
	m, err := mapping.Compile(mapping.Spec{Fields: map[string]mapping.FieldSpec{
		"firstName": {From: "FirstName"}, "lastName": {From: "LastName"},
		"emails.work": {From: "Email"}, "phoneNumbers.work": {From: "Phone", Transform: []string{"e164"}},
	}}, mapping.ToWorkspace, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	typ, _ := connector.Lookup(salesforce.TypeName)
	set := salesforce.NewSettings()
	set.LoginURL = e.org.LoginURL
	set.ClientID, set.ClientSecret = salesforce.Secret(e.org.ClientID()), salesforce.Secret(e.org.ClientSecret())
	set.RateLimit, set.Settle = 100000, 0
	if e.pageSize > 0 {
		set.PageSize = e.pageSize
	}
	src, err := salesforce.Open(context.Background(), connector.Options{Name: "sf", Settings: set, Fields: m.SourceFields(), Log: quietLog()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { src.Close() })
	src.SetClock(e.org.Now)
	var reader connector.Source = src
	if wrap != nil {
		reader = wrap(src)
	}
	var ws Workspace = e.ws
	if e.wsWrap != nil {
		ws = e.wsWrap(ws)
	}
	r, err := New(Options{Connector: "sf", Source: sfSource, Type: typ, Reader: reader, Mapper: m,
		Store: StoreOf(e.store), Workspace: ws, Workers: 8, OnSourceDelete: e.policy, AllowMassDelete: true,
		Backoff: time.Millisecond, MaxAttempts: 6, Log: quietLog()})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.Run(context.Background())
}

// contactsByExt returns the workspace contacts of the connector's source
// by externalId.
func (e *sfEnv) contactsByExt() map[string][]workspace.Contact {
	out := map[string][]workspace.Contact{}
	for _, c := range e.emu.Contacts() {
		if c.Source != nil && *c.Source == sfSource && c.ExternalID != nil {
			out[*c.ExternalID] = append(out[*c.ExternalID], c)
		}
	}
	return out
}

// crashAfter stops the first read after n batches, as a crash would.
type crashAfter struct {
	connector.Source
	n int
}

var errCrash = errors.New("crash")

func (c *crashAfter) Changes(ctx context.Context, cp string, fn connector.BatchFunc) error {
	if c.n <= 0 {
		return c.Source.Changes(ctx, cp, fn)
	}
	return c.Source.Changes(ctx, cp, func(ctx context.Context, b connector.Batch) error {
		if err := fn(ctx, b); err != nil {
			return err
		}
		if c.n--; c.n == 0 {
			return errCrash // the batch and its checkpoint are recorded
		}
		return nil
	})
}

// TestSalesforceSharedModstampReadOnce syncs n Contacts, n/5 of them
// sharing one SystemModstamp across query page boundaries (pages of
// n/12.5), with a crash after the sixth page (inside the group): the
// pages read every record exactly once (the org counts what it sends), every one
// is linked to one contact, and none is duplicated. n is 5,000 (pages of
// 400); SYNCD_TEST_SF_SCALE=5 runs the 25,000 with 5,000 on one
// SystemModstamp and pages of 2,000 (about a minute under -race on an
// idle machine). connector/salesforce's TestSharedModstampAcrossPages
// reads the 25,000 at every scale.
func TestSalesforceSharedModstampReadOnce(t *testing.T) {
	scale := 1
	if v := os.Getenv("SYNCD_TEST_SF_SCALE"); v != "" {
		var err error
		if scale, err = strconv.Atoi(v); err != nil || scale < 1 {
			t.Fatalf("SYNCD_TEST_SF_SCALE=%q is not a positive integer", v)
		}
	}
	n, page := 5000*scale, 400*scale
	e := newSFEnv(t)
	add := func(from, to int, perSecond int) {
		for i := from; i < to; i++ {
			if perSecond > 0 && i%perSecond == 0 {
				e.org.Advance(time.Second)
			}
			e.org.Add("Contact", sfContact(i))
		}
	}
	add(0, 2*n/5, n/25)
	e.org.Advance(time.Second)
	add(2*n/5, 3*n/5, 0) // one SystemModstamp, across two page boundaries
	add(3*n/5, n, n/25)
	e.org.Advance(time.Second)

	crash := &crashAfter{n: 6}
	e.pageSize = page
	if _, err := e.run(func(s connector.Source) connector.Source { crash.Source = s; return crash }); !errors.Is(err, errCrash) {
		t.Fatalf("first run: %v, want the crash after 6 pages", err)
	}
	sum, err := e.run(nil)
	if err != nil {
		t.Fatal(err)
	}
	reads := e.org.ReadCounts()
	twice := 0
	for _, c := range reads {
		if c != 1 {
			twice++
		}
	}
	st := e.org.Stats()
	t.Logf("resumed run: %v; %d records read, %d query calls, %d queryMore calls", sum, len(reads),
		st.Requests[salesforceemu.RouteQueryAll], st.Requests[salesforceemu.RouteQueryMore])
	// The pages read every record once. At the size the records
	// after the 10,000th share their phones with linked ones, so the
	// mass re-key guard asks the org for up to maxSharers of those linked
	// records (one query) to see that they still exist, instead of
	// reading the whole org again: those are the only records read twice.
	if len(reads) != n || twice > maxSharers {
		t.Fatalf("%d records read, %d of them more than once; want %d, each read once (but for the re-key guard's look-up of at most %d)", len(reads), twice, n, maxSharers)
	}
	byExt := e.contactsByExt()
	if len(byExt) != n || len(e.emu.Contacts()) != n {
		t.Errorf("the workspace has %d externalIds of the source and %d contacts, want %d", len(byExt), len(e.emu.Contacts()), n)
	}
	for ext, cs := range byExt {
		if len(cs) != 1 {
			t.Errorf("record %s has %d contacts", ext, len(cs))
		}
	}
	if got, err := e.store.Links.Count("sf"); err != nil || got != n {
		t.Errorf("%d links (%v), want %d", got, err, n)
	}
}

// TestSalesforceMergeRelinksContact merges a synced Contact into one made
// since: the merged record's contact moves to the survivor (its
// externalId, its values), no contact is created or deleted. A merge into
// a record that has its own contact follows onSourceDelete.
func TestSalesforceMergeRelinksContact(t *testing.T) {
	e := newSFEnv(t)
	e.policy = policy.DeleteRemove
	e.org.Advance(time.Second)
	a := e.org.Add("Contact", sfContact(1))
	b := e.org.Add("Contact", sfContact(2))
	e.org.Advance(time.Second)
	if sum, err := e.run(nil); err != nil || sum.Created != 2 {
		t.Fatalf("first pass: %v, %v", sum, err)
	}
	before := e.contactsByExt()
	contactA := before[a][0].ID

	e.org.Advance(time.Second)
	survivor := e.org.Add("Contact", map[string]any{"FirstName": "Ada", "LastName": "Byron", "Email": "ada1@example.com"})
	e.org.Advance(time.Second)
	if err := e.org.Merge(survivor, a); err != nil {
		t.Fatal(err)
	}
	if err := e.org.Merge(survivor, b); err != nil { // b's contact is now the duplicate
		t.Fatal(err)
	}
	e.org.Advance(time.Second)
	sum, err := e.run(nil)
	if err != nil {
		t.Fatal(err)
	}
	after := e.contactsByExt()
	if len(after) != 1 || len(after[survivor]) != 1 {
		t.Fatalf("after the merges the source's contacts are %v, want only the survivor %s", keys(after), survivor)
	}
	c := after[survivor][0]
	if c.ID != contactA {
		t.Errorf("the survivor's contact is %s, want the merged record's contact %s", c.ID, contactA)
	}
	if deref(c.DefaultFields.LastName) != "Byron" {
		t.Errorf("the re-linked contact's lastName is %q, want the survivor's Byron", deref(c.DefaultFields.LastName))
	}
	if sum.Created != 0 || sum.Relinked != 1 || sum.Deleted != 1 {
		t.Errorf("merge pass %v, want 1 relinked, 1 deleted (b's duplicate), nothing created", sum)
	}
	if _, ok, _ := e.store.Links.Get("sf", a); ok {
		t.Errorf("the merged record %s still has a link", a)
	}
}

// TestSalesforceDeletesFollowPolicy deletes one Contact (read from the
// Recycle Bin through queryAll) and one purged from the Recycle Bin
// before a pass read it (found through getDeleted): both contacts follow
// onSourceDelete.
func TestSalesforceDeletesFollowPolicy(t *testing.T) {
	for _, pol := range []policy.Delete{policy.DeleteRemove, policy.DeleteUnlink} {
		t.Run(pol.String(), func(t *testing.T) {
			e := newSFEnv(t)
			e.policy = pol
			e.org.Advance(time.Second)
			ids := make([]string, 4)
			for i := range ids {
				ids[i] = e.org.Add("Contact", sfContact(i))
			}
			e.org.Advance(time.Minute)
			if _, err := e.run(nil); err != nil {
				t.Fatal(err)
			}
			e.org.Advance(time.Second)
			if err := e.org.Delete(ids[1]); err != nil {
				t.Fatal(err)
			}
			if err := e.org.Delete(ids[2]); err != nil {
				t.Fatal(err)
			}
			e.org.EmptyRecycleBin(e.org.Now().Add(time.Second), false) // ids[2] is purged
			e.org.Advance(2 * time.Minute)
			sum, err := e.run(nil)
			if err != nil {
				t.Fatal(err)
			}
			got := e.contactsByExt()
			total := len(e.emu.Contacts())
			switch pol {
			case policy.DeleteRemove:
				if len(got) != 2 || total != 2 || sum.Deleted != 2 {
					t.Errorf("delete policy: %d source contacts, %d in all, summary %v; want 2 left and 2 deleted", len(got), total, sum)
				}
			case policy.DeleteUnlink:
				if total != 4 || sum.Unlinked != 2 {
					t.Errorf("unlink policy: %d contacts, summary %v; want 4 kept and 2 unlinked", total, sum)
				}
			}
			for _, id := range ids[1:3] {
				if _, ok, _ := e.store.Links.Get("sf", id); ok {
					t.Errorf("deleted record %s still has a link", id)
				}
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// loseMoveAnswer applies the first externalId change and loses its
// answer, as a connection dropped after the workspace applied it.
type loseMoveAnswer struct {
	Workspace
	lost int
}

func (w *loseMoveAnswer) UpdateContact(ctx context.Context, id string, p workspace.ContactPatch) (workspace.Contact, error) {
	c, err := w.Workspace.UpdateContact(ctx, id, p)
	if err == nil && p.ExternalID.IsSet() && w.lost == 0 {
		w.lost++
		return workspace.Contact{}, errors.New("connection reset after the request was sent")
	}
	return c, err
}

// TestSalesforceMergeSurvivesALostAnswer loses the answer of the PATCH
// that moves a merged record's contact to the survivor: the pass fails
// before the link moved, and the next one makes the same move (no
// contact created, deleted or left behind).
func TestSalesforceMergeSurvivesALostAnswer(t *testing.T) {
	e := newSFEnv(t)
	e.org.Advance(time.Second)
	a := e.org.Add("Contact", sfContact(1))
	e.org.Advance(time.Second)
	if _, err := e.run(nil); err != nil {
		t.Fatal(err)
	}
	contact := e.contactsByExt()[a][0].ID
	e.org.Advance(time.Second)
	survivor := e.org.Add("Contact", map[string]any{"FirstName": "Ada", "LastName": "Byron", "Email": "ada1@example.com"})
	if err := e.org.Merge(survivor, a); err != nil {
		t.Fatal(err)
	}
	e.org.Advance(time.Second)
	lose := &loseMoveAnswer{}
	e.wsWrap = func(w Workspace) Workspace { lose.Workspace = w; return lose }
	if _, err := e.run(nil); err == nil {
		t.Fatal("the pass whose move lost its answer reported no error")
	}
	if l, ok, _ := e.store.Links.Get("sf", a); !ok || l.ContactID != contact {
		t.Fatalf("after the lost answer the merged record's link is %+v, %v; want it kept", l, ok)
	}
	sum, err := e.run(nil)
	if err != nil {
		t.Fatal(err)
	}
	after := e.contactsByExt()
	if len(e.emu.Contacts()) != 1 || len(after[survivor]) != 1 || after[survivor][0].ID != contact || sum.Created != 0 {
		t.Fatalf("after the retry: %d contacts, survivor's %v, summary %v; want the one contact moved", len(e.emu.Contacts()), after[survivor], sum)
	}
}
