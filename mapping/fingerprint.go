package mapping

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"text/template"
	"text/template/parse"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
)

// fingerprintVersion is part of every configuration fingerprint. Bump it
// when a change of this package maps the same record and configuration to
// other canonical values (a normaliser, a hash form): every record is then
// mapped again once. A build from another VCS revision does the same on
// its own (see buildRevision).
const fingerprintVersion = "syncd-record-fingerprint-v2" // v2: local-only phone numbers refused (issue 22)

// Fingerprint is a digest of what ToContact reads of r (its ID, and the
// values of the record fields the mapping reads, in name order), of the
// mapping's configuration, and of seal: the reconciler passes the hash of
// the values r was last mapped to, so that a fingerprint stored with them
// says "this raw record, under this configuration, maps to these values".
// Equal fingerprints mean ToContact would give the same result: a record
// whose fingerprint matches its link's needs no mapping. Editing a field
// the mapping does not read leaves the fingerprint as it was; changing the
// mapping changes every fingerprint.
func (m *Mapper) Fingerprint(r connector.Record, seal string) [8]byte {
	bp := fpBufs.Get().(*[]byte)
	b := append((*bp)[:0], m.config[:]...)
	if m.types != nil {
		// A custom field's type decides its canonical value: a type
		// changed in the workspace maps the record anew.
		for _, key := range m.fpCustom {
			b = appendBytes(b, m.types.CustomFieldType(key))
		}
	}
	b = appendBytes(b, seal)
	b = appendBytes(b, r.ID)
	if m.fpAll {
		names := make([]string, 0, len(r.Fields))
		for k := range r.Fields {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			b = appendBytes(b, k)
			b = appendValue(b, r.Fields[k])
		}
	} else {
		for _, k := range m.fpFields {
			b = appendValue(b, r.Fields[k])
		}
	}
	sum := sha256.Sum256(b)
	*bp = b
	fpBufs.Put(bp)
	var out [8]byte
	copy(out[:], sum[:8])
	return out
}

var fpBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func appendBytes(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendValue writes a record value as the mapping sees it (toValue): a
// tag for its shape, then its strings.
func appendValue(b []byte, x any) []byte {
	switch x := x.(type) {
	case nil:
		return append(b, 0)
	case string:
		return appendBytes(append(b, 1), x)
	case []string:
		b = binary.AppendUvarint(append(b, 2), uint64(len(x)))
		for _, s := range x {
			b = appendBytes(b, s)
		}
		return b
	case []any:
		b = binary.AppendUvarint(append(b, 2), uint64(len(x)))
		for _, e := range x {
			b = appendBytes(b, toValue(e).s)
		}
		return b
	}
	return appendBytes(append(b, 3), toString(x))
}

// prepareFingerprint computes the configuration's digest and the record
// fields Fingerprint reads.
func (m *Mapper) prepareFingerprint(spec Spec, direction policy.Direction) {
	var b strings.Builder
	w := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
			b.WriteByte(0)
		}
		b.WriteByte('\n')
	}
	w(fingerprintVersion, buildRevision())
	w("externalId", m.externalID)
	w("sourceUrl", spec.SourceURL)
	w(append([]string{"firstNameFallback"}, m.fallback...)...)
	w("direction", string(direction))
	for _, f := range m.fields {
		parts := []string{"field", f.target.key, f.from, string(f.direction), f.region}
		if f.deadLetter {
			parts = append(parts, "onInvalid="+OnInvalidDeadLetter)
		}
		for _, st := range f.steps {
			parts = append(parts, st.String())
		}
		w(parts...)
	}
	m.config = sha256.Sum256([]byte(b.String()))
	// The digest leaves out the first line (the build): a new build of
	// the same configuration is no mapping change.
	_, spec1, _ := strings.Cut(b.String(), "\n")
	m.digest = sha256.Sum256([]byte(spec1))
	for _, f := range m.fields {
		if f.forward() && f.target.kind == kindCustom {
			m.fpCustom = append(m.fpCustom, f.target.label)
		}
	}
	m.fpAll = m.sourceURL != nil && readsWholeRecord(m.sourceURL)
	m.fpFields = m.SourceFields()
}

// Digest names the mapping's configuration (what it reads and how it
// maps it), not the build that runs it: it changes when a field is added,
// removed or transformed otherwise, and the reconciler then reads every
// record of an incremental connector once more.
func (m *Mapper) Digest() string { return hex.EncodeToString(m.digest[:16]) }

// buildRevision is the VCS revision the binary was built from, "" when
// unknown (tests): a new build maps every record once more, in case its
// canonical forms differ.
func buildRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	return rev + modified
}

// readsWholeRecord reports whether a template may read record fields that
// templateFields cannot name: the record itself (dot) anywhere but in
// `index . "name"`, a variable, or a chained field.
func readsWholeRecord(t *template.Template) bool {
	whole := false
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n != nil {
				for _, c := range n.Nodes {
					walk(c)
				}
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n != nil {
				if len(n.Decl) > 0 {
					whole = true
				}
				for _, c := range n.Cmds {
					walk(c)
				}
			}
		case *parse.CommandNode:
			for i, a := range n.Args {
				if _, dot := a.(*parse.DotNode); dot && i == 1 && len(n.Args) == 3 {
					if id, ok := n.Args[0].(*parse.IdentifierNode); ok && id.Ident == "index" {
						if _, lit := n.Args[2].(*parse.StringNode); lit {
							continue
						}
					}
				}
				walk(a)
			}
		case *parse.DotNode, *parse.VariableNode, *parse.ChainNode:
			whole = true
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			whole = true // dot changes meaning inside
		case *parse.RangeNode:
			whole = true
		case *parse.TemplateNode:
			whole = true
		}
	}
	if t.Tree != nil {
		walk(t.Tree.Root)
	}
	return whole
}
