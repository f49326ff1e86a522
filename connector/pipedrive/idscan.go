package pipedrive

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// The id scan finds deleted persons by what Pipedrive documents: a deleted
// person leaves the v2 listing. Every idScanInterval the scan lists the
// ids of every live person (sorted by id, cursor paged) and compares them
// with the ids known before: those of the previous scan and those the
// windows read since. A known id the listing lacks was deleted (or merged
// away with no trace in the recents feed) and is emitted once as a
// Deleted record. The known ids ride in the checkpoint, delta-encoded and
// compressed (a few kilobytes for tens of thousands of persons).

// idScanCursor is the id scan's part of the checkpoint.
type idScanCursor struct {
	// IDs are the known person ids, encoded (see encodeIDs).
	IDs string `json:"ids,omitempty"`
	// At is when the last scan ended (Unix ms, syncd's clock); 0 before
	// the first.
	At int64 `json:"at,omitempty"`
}

// knownIDs keeps the decoded known ids of the checkpoint last seen, so
// that each batch does not decode them again.
type knownIDs struct {
	enc string
	ids []int64 // sorted, unique
}

// load returns the ids of enc, decoding them unless they are the ones
// kept.
func (k *knownIDs) load(enc string) ([]int64, error) {
	if enc == k.enc && (k.ids != nil || enc == "") {
		return k.ids, nil
	}
	ids, err := decodeIDs(enc)
	if err != nil {
		return nil, fmt.Errorf("parse pipedrive checkpoint: known ids: %w", err)
	}
	k.enc, k.ids = enc, ids
	return ids, nil
}

// add merges the ids of persons read into the known ids of cp and
// re-encodes them when any was new.
func (s *Source) addKnown(cp *checkpoint, ps []person) error {
	ids, err := s.known.load(cp.Known.IDs)
	if err != nil {
		return err
	}
	added := false
	for _, p := range ps {
		if p.IsDeleted || p.ID <= 0 {
			continue
		}
		if _, found := slices.BinarySearch(ids, p.ID); !found {
			ids = append(ids, p.ID)
			added = true
		}
	}
	if !added {
		return nil
	}
	slices.Sort(ids)
	cp.Known.IDs = encodeIDs(ids)
	s.known.enc, s.known.ids = cp.Known.IDs, ids
	return nil
}

// scanIDs runs the id scan when it is due and emits the known persons
// the listing lacks as Deleted records, in one batch whose checkpoint
// holds the listing's ids (a scan that finds nothing still saves them,
// so that it is not repeated before its interval). A fresh checkpoint
// only starts the interval: the first read reads every person.
func (s *Source) scanIDs(ctx context.Context, cp checkpoint, fn connector.BatchFunc) (checkpoint, error) {
	now := s.now().UnixMilli()
	fresh := cp.Persons.Since == 0 && cp.Persons.Until == 0 && cp.Known.IDs == ""
	if cp.Known.At == 0 && fresh {
		cp.Known.At = now
		return cp, nil
	}
	if cp.Known.At != 0 && now-cp.Known.At < s.idScanInterval.Milliseconds() {
		return cp, nil
	}
	known, err := s.known.load(cp.Known.IDs)
	if err != nil {
		return cp, err
	}
	idx := map[string][]int64{}
	live, err := s.liveIDs(ctx, idx)
	if err != nil {
		return cp, err
	}
	var recs []connector.Record
	at := s.now()
	for _, id := range known {
		if _, found := slices.BinarySearch(live, id); !found {
			sid := strconv.FormatInt(id, 10)
			recs = append(recs, connector.Record{ID: sid, Deleted: true, UpdatedAt: at, Fields: map[string]any{fieldID: sid}})
		}
	}
	if len(recs) > 0 {
		s.log.WithField(logfield.Deleted, len(recs)).Info("id scan found persons no longer in Pipedrive")
		s.survivors.merge(idx) // for Survivor, while the deletions are handled
	}
	cp.Known = idScanCursor{IDs: encodeIDs(live), At: s.now().UnixMilli()}
	s.known.enc, s.known.ids = cp.Known.IDs, live
	if len(recs) == 0 && s.idScanInterval == 0 {
		return cp, nil // scanned on every read: the progress rides on the next batch
	}
	if err := fn(ctx, connector.Batch{Records: recs, Checkpoint: cp.String()}); err != nil {
		return cp, fmt.Errorf("pipedrive batch: %w", err)
	}
	return cp, nil
}

// dropKnown removes from cp's known ids the persons the recents feed
// reported deleted, so that the id scan does not emit them again.
func (s *Source) dropKnown(cp *checkpoint, recs []connector.Record) error {
	ids, err := s.known.load(cp.Known.IDs)
	if err != nil {
		return err
	}
	out := slices.Clone(ids)
	for _, r := range recs {
		n, err := strconv.ParseInt(r.ID, 10, 64)
		if err != nil {
			continue
		}
		if i, found := slices.BinarySearch(out, n); found {
			out = slices.Delete(out, i, i+1)
		}
	}
	if len(out) == len(ids) {
		return nil
	}
	cp.Known.IDs = encodeIDs(out)
	s.known.enc, s.known.ids = cp.Known.IDs, out
	return nil
}

// liveIDs lists the ids of every live person, sorted, indexing their
// e-mail addresses and phone numbers into idx.
func (s *Source) liveIDs(ctx context.Context, idx map[string][]int64) ([]int64, error) {
	var ids []int64
	cursor := ""
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q := url.Values{"sort_by": {"id"}, "sort_direction": {"asc"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		pg, err := s.listPersons(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("scan person ids: %w", err)
		}
		for _, p := range pg.Data {
			if !p.IsDeleted {
				ids = append(ids, p.ID)
			}
		}
		indexPersons(idx, pg.Data)
		if cursor = pg.next(); cursor == "" {
			break
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// encodeIDs encodes sorted ids as the deltas between them (uvarint),
// deflated, in base64.
func encodeIDs(ids []int64) string {
	if len(ids) == 0 {
		return ""
	}
	var raw bytes.Buffer
	var buf [binary.MaxVarintLen64]byte
	prev := int64(0)
	for _, id := range ids {
		raw.Write(buf[:binary.PutUvarint(buf[:], uint64(id-prev))])
		prev = id
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestSpeed)
	_, _ = w.Write(raw.Bytes())
	_ = w.Close()
	return base64.RawStdEncoding.EncodeToString(z.Bytes())
}

// decodeIDs reverses encodeIDs.
func decodeIDs(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	z, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), 64<<20))
	if err != nil {
		return nil, err
	}
	var ids []int64
	prev := int64(0)
	for r := bytes.NewReader(raw); r.Len() > 0; {
		d, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		if d == 0 && len(ids) > 0 {
			return nil, fmt.Errorf("ids not increasing")
		}
		prev += int64(d)
		ids = append(ids, prev)
	}
	return ids, nil
}
