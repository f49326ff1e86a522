package reconcile

import (
	"slices"
	"strings"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
)

// keepUnread gives the targets mapped from the fields a record could not
// read (connector.Record.Unread: a PostgreSQL row gone before its
// unchanged TOASTed value was read) the values its link agreed on, so
// that the pass neither clears nor changes what the contact holds of
// them: a contact field is never emptied by a value syncd did not read.
// The rest of the record is written as usual. Only linked items are
// kept so: without a link the target is simply not written.
func keepUnread(m *mapping.Mapper, it *item) {
	if len(it.rec.Unread) == 0 || it.link == nil {
		return
	}
	for _, fs := range m.FieldSources() {
		if !slices.Contains(it.rec.Unread, fs.Field) {
			continue
		}
		switch {
		case fs.Path == "sourceUrl":
			it.mapped.SourceURL = it.link.Fields[sourceURLKey]
		case strings.HasPrefix(fs.Path, "fields."):
			target := strings.TrimPrefix(fs.Path, "fields.")
			if v, ok := it.link.Fields[target]; ok {
				it.mapped.Fields[target] = v
			} else {
				delete(it.mapped.Fields, target)
			}
		}
	}
	it.fields = ContactFields(it.mapped)
	it.hash = it.fields.Hash()
}

// fingerprint is the record's fingerprint sealed with hash (see
// mapping.Mapper.Fingerprint), or zero (unknown) for a partial record:
// its fingerprint reads an unread field as NULL, and would let a later
// record whose field is NULL pass for unchanged while the link holds the
// value kept for it.
func fingerprint(m *mapping.Mapper, rec connector.Record, hash string) [8]byte {
	if len(rec.Unread) > 0 {
		return [8]byte{}
	}
	return m.Fingerprint(rec, hash)
}
