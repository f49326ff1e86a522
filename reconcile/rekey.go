package reconcile

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/idset"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
)

// ErrMassRekey is returned when a pass would create many contacts while a
// similar number of linked records vanished from the source: the source's
// ids most likely changed (a migration, a re-import), and creating would
// duplicate every person.
var ErrMassRekey = errors.New("mass re-key refused")

// The mass re-key guard. A pass counts, before each batch's writes, the
// contacts it would create; once they pass MassRekeyThreshold of the
// connector's links, it looks (in the state file only) how many of them
// share a phone or an e-mail with a linked contact: the same people under
// new ids. Only when those pass the threshold too (or, for a connector
// that reads everything each pass anyway, when the mapping maps no phone
// and no e-mail, so that it cannot tell) does it read the source
// once more (a snapshot, before anything of that batch is written) to
// count the records that have no link and the links whose record is
// gone. Growth (an import, a first sync resumed) thus costs no extra
// read of the source. When both are over the
// threshold and of a similar size (the smaller at least half the larger),
// the pass stops with ErrMassRekey saying what it saw, unless
// AllowMassRekey: then each record it would create first looks for the
// contact of a vanished record with the same phone or e-mail (the
// connector's match keys, both when none are set) and, when exactly one
// shares them, takes it over: the contact's externalId and link move to
// the new record (as a merge moves them), and its values are patched.
// The records that find none are created; the vanished ones follow
// onSourceDelete, behind the mass-delete guard.

// rekeyGuard is the mass re-key guard of a pass: its settings and store
// and what it knows of a re-key.
type rekeyGuard struct {
	r     *Reconciler
	links interface {
		Digests(connector string, externalIDs []string) ([]state.LinkDigest, error)
		ForEach(connector string, fn func(state.Link) error) error
		ForEachWhere(connector string, want func(externalID []byte) bool, fn func(state.Link) error) error
		Get(connector, externalID string) (l state.Link, ok bool, err error)
	}
	rulesOf func() rules
	tally   *tally
	merger  *merger
	// linked is the pass's count of links, as of the batch guarded.
	linked int

	checked bool
	// linkedKeys maps the hashed identity keys of the linked contacts to
	// the record of one link that carries it (nil until needed);
	// identities counts the would-be creates that share one, identified
	// whether the mapping maps a phone or e-mail; sharers are the records
	// of links whose identity a create shares (at most maxSharers).
	linkedKeys map[uint64]string
	seed       maphash.Seed
	identities int
	identified bool
	sharers    map[string]struct{}
	// byKey maps a match key to the vanished links that carry it (only
	// when the re-key is allowed); taken are the links moved already.
	byKey map[string][]state.Link
	taken map[string]bool
}

// guardRekey runs the guard for a batch's items to write; it returns them
// with the creates that took over a vanished record's contact turned
// into patches of that contact.
func (g *rekeyGuard) guardRekey(ctx context.Context, work []*item, linked int) ([]*item, error) {
	r := g.r
	g.linked = linked
	ru := g.rulesOf()
	var creates []*item
	for _, it := range work {
		if decide(it, ru) == actCreate {
			creates = append(creates, it)
		}
	}
	if len(creates) == 0 || g.linked == 0 {
		return work, nil
	}
	if !g.checked {
		g.tally.mu.Lock()
		created := g.tally.sum.Created
		g.tally.mu.Unlock()
		limit := r.opts.MassRekeyThreshold * float64(g.linked)
		if float64(created+len(creates)) <= limit {
			return work, nil
		}
		if err := g.countIdentities(creates); err != nil {
			return nil, err
		}
		if g.identified && float64(g.identities) <= limit {
			return work, nil // new people, not new ids
		}
		if !g.identified && r.opts.Type.Incremental {
			// Nothing tells a re-key from growth without reading the
			// whole source again, which an incremental connector's
			// budget must not pay for every large import.
			g.checked = true
			return work, nil
		}
		if g.sharersLive(ctx) {
			g.checked = true
			return work, nil
		}
		if err := g.checkRekey(ctx); err != nil {
			return nil, err
		}
	}
	if g.byKey == nil {
		return work, nil
	}
	for _, it := range creates {
		if err := g.takeOver(ctx, it); err != nil {
			return nil, err
		}
	}
	return work, nil
}

// countIdentities counts the creates that share a phone or e-mail with a
// linked contact, indexing the links' identity keys at its first call.
func (g *rekeyGuard) countIdentities(creates []*item) error {
	if g.linkedKeys == nil {
		g.linkedKeys, g.seed, g.sharers = map[uint64]string{}, maphash.MakeSeed(), map[string]struct{}{}
		for _, t := range g.r.opts.Mapper.ForwardTargets() {
			g.identified = g.identified || strings.HasPrefix(t, "phoneNumbers.") || strings.HasPrefix(t, "emails.")
		}
		err := g.links.ForEach(g.r.opts.Connector, func(l state.Link) error {
			for _, k := range g.identityKeys(mapping.Fields(l.Fields)) {
				g.linkedKeys[maphash.String(g.seed, k)] = l.RecordID
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("index linked contacts by phone and e-mail: %w", err)
		}
	}
	for _, it := range creates {
		for _, k := range g.identityKeys(it.fields) {
			if rec, ok := g.linkedKeys[maphash.String(g.seed, k)]; ok {
				g.identities++
				if len(g.sharers) < maxSharers && rec != "" {
					g.sharers[rec] = struct{}{}
				}
				break
			}
		}
	}
	return nil
}

// maxSharers bounds the linked records sharersLive asks the source for:
// one or two calls of any connector's Get.
const maxSharers = 200

// sharersLive reports whether most of the linked records whose phone or
// e-mail the new records share are still in the source, asked by ID
// through the connector's Getter: then the new records are new people
// who share a switchboard number or a mailbox with linked ones, and no
// re-key, and the whole source need not be read again to tell (a
// resumed first sync of a CRM whose records share phones would otherwise
// read everything twice). A re-key leaves those records gone. Without a
// Getter, or when the look-up fails, it reports false and the full check
// decides.
func (g *rekeyGuard) sharersLive(ctx context.Context) bool {
	getter, ok := g.r.opts.Reader.(connector.Getter)
	if !ok || len(g.sharers) == 0 {
		return false
	}
	ids := make([]string, 0, len(g.sharers))
	for id := range g.sharers {
		ids = append(ids, id)
	}
	recs, err := getter.Get(ctx, ids)
	if err != nil {
		g.r.log.WithError(err).Warn("could not read the linked records that new records share a phone or e-mail with; reading the source to check for a mass re-key")
		return false
	}
	live := 0
	for _, rec := range recs {
		if !rec.Deleted {
			live++
		}
	}
	if 2*live < len(ids) {
		return false
	}
	g.r.log.WithFields(map[string]any{logfield.NewRecords: g.identities, logfield.Linked: g.linked, logfield.Live: live, logfield.Asked: len(ids)}).
		Info("many new records share a phone or e-mail with linked ones, but those are still in the source: no mass re-key")
	return true
}

// checkRekey reads the source and the links once and stops the pass on a
// mass re-key (see above).
func (g *rekeyGuard) checkRekey(ctx context.Context) error {
	r := g.r
	g.checked = true
	seen, seed := idset.New(0), maphash.MakeSeed()
	defer seen.Close()
	fresh := 0
	err := r.opts.Reader.Snapshot(ctx, func(ctx context.Context, b connector.Batch) error {
		exts := make([]string, 0, len(b.Records))
		for _, rec := range b.Records {
			if ext, err := r.opts.Mapper.ExternalID(rec); err == nil && !rec.Deleted {
				exts = append(exts, ext)
			}
		}
		digests, err := g.links.Digests(r.opts.Connector, exts)
		if err != nil {
			return err
		}
		for i, ext := range exts {
			maybe, err := seen.Add(maphash.String(seed, ext))
			if err != nil {
				return err
			}
			if !digests[i].Found && !maybe {
				fresh++
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the source to check for a mass re-key: %w", err)
	}
	allow := r.opts.AllowMassRekey
	vanished := 0
	byKey := map[string][]state.Link{}
	err = g.links.ForEachWhere(r.opts.Connector, func(ext []byte) bool {
		has, err := seen.Has(maphash.Bytes(seed, ext))
		return err == nil && !has
	}, func(l state.Link) error {
		vanished++
		if allow {
			for _, k := range g.identityKeys(mapping.Fields(l.Fields)) {
				byKey[k] = append(byKey[k], l)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("scan links: %w", err)
	}
	limit := r.opts.MassRekeyThreshold * float64(g.linked)
	rekeyed := float64(fresh) > limit && float64(vanished) > limit && 2*min(fresh, vanished) >= max(fresh, vanished)
	log := r.log.WithFields(map[string]any{logfield.NewRecords: fresh, logfield.VanishedRecords: vanished, logfield.Linked: g.linked})
	if !rekeyed {
		log.Info("many new records, but no mass re-key: the linked records are still in the source")
		return nil
	}
	if !allow {
		return fmt.Errorf("%w: this pass would create %d contacts while %d of the %d linked records are no longer in the source (over the %.0f%% massRekeyThreshold): did the source's ids change? Nothing of this batch was written. Check the source; if its ids changed, run again with --allow-mass-rekey, and each new record takes over the contact of a vanished record with the same phone or e-mail",
			ErrMassRekey, fresh, vanished, g.linked, r.opts.MassRekeyThreshold*100)
	}
	log.Warn("mass re-key allowed: new records take over the contacts of vanished records with the same phone or e-mail")
	g.byKey, g.taken = byKey, map[string]bool{}
	return nil
}

// identityKeys are the match keys of fields, by the connector's match
// setting, or by phone and e-mail when it has none.
func (g *rekeyGuard) identityKeys(f mapping.Fields) []string {
	if len(g.r.opts.Match) > 0 {
		return g.r.matchKeys(f)
	}
	var keys []string
	for k, v := range f {
		switch {
		case strings.HasPrefix(k, "phoneNumbers."):
			keys = append(keys, "phone:"+v)
		case strings.HasPrefix(k, "emails."):
			keys = append(keys, "email:"+v)
		}
	}
	return keys
}

// takeOver gives an item that would be created the contact of the one
// vanished record that shares its phone or e-mail, if there is exactly
// one; the item is then a patch of that contact.
func (g *rekeyGuard) takeOver(ctx context.Context, it *item) error {
	var one *state.Link
	for _, k := range g.identityKeys(it.fields) {
		for _, l := range g.byKey[k] {
			if g.taken[l.ExternalID] {
				continue
			}
			if one != nil && one.ExternalID != l.ExternalID {
				return nil // several: ambiguous, create
			}
			one = &l
		}
	}
	if one == nil {
		return nil
	}
	moved, err := g.merger.moveContact(ctx, one.ExternalID, *one, it.mapped.ExternalID, it.rec.ID)
	if err != nil || !moved {
		return err
	}
	g.taken[one.ExternalID] = true
	l, ok, err := g.links.Get(g.r.opts.Connector, it.mapped.ExternalID)
	if err != nil || !ok {
		return fmt.Errorf("read moved link %s: found=%v: %w", it.mapped.ExternalID, ok, err)
	}
	it.link = &l
	g.tally.count(func(s *Summary) { s.Relinked++ })
	g.r.log.WithFields(map[string]any{logfield.ExternalID: it.mapped.ExternalID, logfield.Was: one.ExternalID, logfield.Contact: l.ContactID}).
		Info("record took over the contact of a vanished record with the same phone or e-mail")
	return nil
}
