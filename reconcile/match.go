package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
)

// Matching of records against contacts that exist in the workspace
// without a link (made by hand, imported from a phone, made by other
// integrations), at a connector's first sync or a resync. Values of the
// configuration key match; onMatch and onAmbiguous are policy's.
const (
	MatchPhone = "phone"
	MatchEmail = "email"
)

// claimPrefix keys, in the match index, the records that match a contact
// (found by a scan of the source before the pass): two records claiming
// one contact are ambiguous.
const claimPrefix = "claim:"

// Held is what a held record keeps, for `syncd matches list|resolve`.
type Held struct {
	Record     connector.Record `json:"record"`
	Candidates []string         `json:"candidates"`
	Reason     string           `json:"reason"`
}

func (r *Reconciler) matching() bool {
	return len(r.opts.Match) > 0 && r.opts.OnMatch != policy.MatchCreate
}

// matchKeys are the index keys of mapped fields: E.164 phones and
// case-folded e-mails, as the mapping's canonical form has them.
func (r *Reconciler) matchKeys(f mapping.Fields) []string {
	var keys []string
	for _, m := range r.opts.Match {
		for k, v := range f {
			switch {
			case m == MatchPhone && strings.HasPrefix(k, "phoneNumbers."):
				keys = append(keys, "phone:"+v)
			case m == MatchEmail && strings.HasPrefix(k, "emails."):
				keys = append(keys, "email:"+v)
			}
		}
	}
	return keys
}

// contactKeys are the index keys of a workspace contact.
func (r *Reconciler) contactKeys(c workspace.Contact) []string {
	var keys []string
	for _, m := range r.opts.Match {
		switch m {
		case MatchPhone:
			for _, it := range c.DefaultFields.PhoneNumbers {
				if v, err := mapping.NormalizePhone(it.Value, mapping.DefaultRegion); err == nil {
					keys = append(keys, "phone:"+v)
				}
			}
		case MatchEmail:
			for _, it := range c.DefaultFields.Emails {
				if v, err := mapping.NormalizeEmail(it.Value); err == nil {
					keys = append(keys, "email:"+v)
				}
			}
		}
	}
	return keys
}

// adoptable reports whether a listed contact may be matched: it carries
// no source of a syncd connector (it would then be that connector's).
func (r *Reconciler) adoptable(c workspace.Contact) bool {
	if c.Source == nil {
		return true
	}
	if *c.Source == r.opts.Source {
		return c.ExternalID == nil || *c.ExternalID == ""
	}
	for _, s := range r.opts.OtherSources {
		if *c.Source == s {
			return false
		}
	}
	return true
}

// indexContacts adds listed contacts that may be adopted to the match
// index, with their snapshots, in one transaction.
func (x *indexer) indexContacts(cs []workspace.Contact) error {
	if len(cs) == 0 {
		return nil
	}
	r := x.r
	var entries []state.IndexEntry
	docs := make(map[string][]byte, len(cs))
	for _, c := range cs {
		for _, k := range r.contactKeys(c) {
			entries = append(entries, state.IndexEntry{Key: k, ContactID: c.ID})
		}
		doc, err := json.Marshal(c)
		if err != nil {
			return err
		}
		docs[c.ID] = doc
	}
	if err := x.store.PutIndex(r.opts.Connector, entries); err != nil {
		return fmt.Errorf("index contacts: %w", err)
	}
	if err := x.store.PutDocs(r.opts.Connector, docs); err != nil {
		return fmt.Errorf("index contacts: %w", err)
	}
	return nil
}

// resetMatching clears the index and the held records before a listing
// rebuilds them.
func (x *indexer) resetMatching() error {
	r := x.r
	if err := x.store.ClearIndex(r.opts.Connector); err != nil {
		return fmt.Errorf("clear match index: %w", err)
	}
	held, err := x.store.Held(r.opts.Connector)
	if err != nil {
		return fmt.Errorf("read held records: %w", err)
	}
	for ext := range held {
		if err := x.store.DeleteHeld(r.opts.Connector, ext); err != nil {
			return fmt.Errorf("clear held record %s: %w", ext, err)
		}
	}
	return nil
}

// claim scans the source once and records, for each contact that exactly
// one record matches, that record's claim; a contact claimed twice makes
// both records ambiguous.
func (x *indexer) claim(ctx context.Context) error {
	r := x.r
	return r.opts.Reader.Snapshot(ctx, func(ctx context.Context, b connector.Batch) error {
		var claims []state.IndexEntry
		for _, rec := range b.Records {
			m, err := r.opts.Mapper.ToContact(rec)
			if err != nil {
				continue
			}
			cands, err := x.matcher.candidates(m.Fields)
			if err != nil {
				return err
			}
			if len(cands) == 1 {
				claims = append(claims, state.IndexEntry{Key: claimPrefix + cands[0], ContactID: m.ExternalID})
			}
		}
		if err := x.store.PutIndex(r.opts.Connector, claims); err != nil {
			return fmt.Errorf("record claims: %w", err)
		}
		return nil
	})
}

// candidates returns the indexed contacts that share a phone or an e-mail
// with the fields, sorted.
func (m *matcher) candidates(f mapping.Fields) ([]string, error) {
	set := map[string]bool{}
	for _, k := range m.r.matchKeys(f) {
		ids, err := m.store.Lookup(m.r.opts.Connector, k)
		if err != nil {
			return nil, fmt.Errorf("look up match index: %w", err)
		}
		for _, id := range ids {
			set[id] = true
		}
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out, nil
}

// matcher is the match step: it looks unlinked records up by externalId
// and finds, for one no contact carries the externalId of, the one
// contact without a link that shares its phone or e-mail in the match
// index; it holds the record for an operator when several do.
type matcher struct {
	r     *Reconciler
	store interface {
		Lookup(connector, key string) ([]string, error)
		Doc(connector, contactID string) (doc []byte, ok bool, err error)
		PutHeld(connector, externalID string, payload []byte) error
	}
	links interface {
		ByContact(connector, contactID string) (l state.Link, ok bool, err error)
	}
	tally *tally
	plan  *planner
}

// indexer builds the match index from a listing of the workspace, with
// the claims of the records on its contacts, and clears it with the
// held records at a resync.
type indexer struct {
	r     *Reconciler
	store interface {
		ClearIndex(connector string) error
		DeleteHeld(connector, externalID string) error
		Held(connector string) (map[string][]byte, error)
		PutDocs(connector string, docs map[string][]byte) error
		PutIndex(connector string, entries []state.IndexEntry) error
	}
	matcher *matcher
}

// match looks an unlinked, unfound item up in the match index. It sets
// it.match to the one contact it may adopt, or it.ambiguous when the
// match is ambiguous; decide then follows onMatch and onAmbiguous.
func (m *matcher) match(it *item) error {
	r := m.r
	it.matched = true
	cands, err := m.candidates(it.fields)
	if err != nil {
		return err
	}
	free := cands[:0:0]
	for _, id := range cands {
		l, ok, err := m.links.ByContact(r.opts.Connector, id)
		if err != nil {
			return fmt.Errorf("read link of contact %s: %w", id, err)
		}
		if !ok || l.ExternalID == it.mapped.ExternalID {
			free = append(free, id)
		}
	}
	switch len(free) {
	case 0:
		return nil
	case 1:
		return m.matchOne(it, free[0])
	}
	it.ambiguous = &ambiguity{candidates: free, reason: fmt.Sprintf("matches %d contacts (%s) by phone or e-mail", len(free), strings.Join(free, ", "))}
	return nil
}

// matchOne sets the item's match to the contact, unless other records
// claim it too.
func (m *matcher) matchOne(it *item, contactID string) error {
	r := m.r
	claims, err := m.store.Lookup(r.opts.Connector, claimPrefix+contactID)
	if err != nil {
		return fmt.Errorf("read claims: %w", err)
	}
	if len(claims) > 1 {
		it.ambiguous = &ambiguity{candidates: []string{contactID}, reason: fmt.Sprintf("records %s all match contact %s", strings.Join(claims, ", "), contactID)}
		return nil
	}
	doc, ok, err := m.store.Doc(r.opts.Connector, contactID)
	if err != nil || !ok {
		return fmt.Errorf("read matched contact %s: found=%v: %w", contactID, ok, err)
	}
	var c workspace.Contact
	if err := json.Unmarshal(doc, &c); err != nil {
		return fmt.Errorf("decode matched contact %s: %w", contactID, err)
	}
	it.match = &c
	return nil
}

// hold sets an ambiguously matching record aside for an operator.
func (m *matcher) hold(it *item) error {
	r := m.r
	a := it.ambiguous
	payload, err := json.Marshal(Held{Record: it.rec, Candidates: a.candidates, Reason: a.reason})
	if err != nil {
		return err
	}
	if err := m.store.PutHeld(r.opts.Connector, it.mapped.ExternalID, payload); err != nil {
		return fmt.Errorf("hold record %s: %w", it.mapped.ExternalID, err)
	}
	m.plan.planned("hold", it.mapped.ExternalID, strings.Join(a.candidates, ","), nil, nil)
	m.tally.count(func(s *Summary) { s.Held++ })
	r.log.WithField(logfield.ExternalID, it.mapped.ExternalID).WithField(logfield.Reason, a.reason).Info("ambiguous match held for an operator")
	return nil
}

// lookUp finds existing contacts for unlinked records by externalId (50
// values per call), so that a contact made before a crash or before the
// state was lost is adopted instead of duplicated.
func (m *matcher) lookUp(ctx context.Context, items []*item) error {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.mapped.ExternalID
	}
	found, err := m.r.opts.Workspace.ContactsByExternalIDs(ctx, m.r.opts.Source, ids)
	if err != nil {
		return fmt.Errorf("look up %d externalIds: %w", len(ids), err)
	}
	byExt := oldestByExternalID(found)
	for _, it := range items {
		it.lookedUp = true
		if c, ok := byExt[it.mapped.ExternalID]; ok {
			m.r.setFound(it, &c)
		}
	}
	return nil
}
