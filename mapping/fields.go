package mapping

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Fields are a contact's mapped values in canonical form, keyed by
// workspace target: "firstName", "lastName", "company", "role",
// "emails.<label>", "phoneNumbers.<label>" and "custom.<key>".
//
// Canonical form: strings trimmed; e-mail addresses lower-cased; phone
// numbers in E.164; the values of a multi-value custom field trimmed,
// sorted, without duplicates and joined with "\x1f" (the ASCII unit
// separator). An empty value is the same as an absent one. Two sides that
// hold the same data therefore have equal Fields and equal hashes, however
// their fields, labels or white space are ordered.
type Fields map[string]string

// Hash returns a stable digest of the non-empty values: equal Fields,
// in any map order, hash equally, and an empty value hashes as a missing
// one.
func (f Fields) Hash() string {
	bp := hashBufs.Get().(*[]byte)
	b := append((*bp)[:0], "syncd-fields-v1\n"...)
	var keys [16]string
	for _, k := range f.appendKeys(keys[:0]) {
		// "%d:%s%d:%s\n" of the key and its value.
		b = strconv.AppendInt(b, int64(len(k)), 10)
		b = append(append(b, ':'), k...)
		b = strconv.AppendInt(b, int64(len(f[k])), 10)
		b = append(append(b, ':'), f[k]...)
		b = append(b, '\n')
	}
	sum := sha256.Sum256(b)
	*bp = b
	hashBufs.Put(bp)
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

var hashBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// appendKeys appends the targets with a non-empty value to keys, sorted.
func (f Fields) appendKeys(keys []string) []string {
	for k, v := range f {
		if v != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// keys returns the targets with a non-empty value, sorted.
func (f Fields) keys() []string {
	keys := make([]string, 0, len(f))
	for k, v := range f {
		if v != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// Only returns the values of the named targets, for comparing one
// direction's targets of two sides.
func (f Fields) Only(targets []string) Fields {
	out := make(Fields, len(targets))
	for _, t := range targets {
		if v := f[t]; v != "" {
			out[t] = v
		}
	}
	return out
}

// Equal reports whether f and g hold the same non-empty values.
func (f Fields) Equal(g Fields) bool {
	set, removed := Diff(f, g)
	return len(set) == 0 && len(removed) == 0
}

// Diff compares two versions of a side's Fields: set holds the targets of
// new whose value is new or changed, removed the targets that had a value
// in old and have none in new, sorted.
func Diff(old, new Fields) (set Fields, removed []string) {
	set = Fields{}
	for k, v := range new {
		if v != "" && old[k] != v {
			set[k] = v
		}
	}
	for k, v := range old {
		if v != "" && new[k] == "" {
			removed = append(removed, k)
		}
	}
	sort.Strings(removed)
	return set, removed
}

// Target kinds.
type targetKind int

const (
	kindName   targetKind = iota + 1 // firstName, lastName, company, role
	kindEmail                        // emails.<label>
	kindPhone                        // phoneNumbers.<label>
	kindCustom                       // custom.<key>
)

// target is a parsed workspace target.
type target struct {
	key   string // as written: "emails.work"
	kind  targetKind
	label string // the e-mail or phone label, the custom field key, or the name
}

var simpleTargets = map[string]bool{"firstName": true, "lastName": true, "company": true, "role": true}

const targetHelp = "firstName, lastName, company, role, emails.<label>, phoneNumbers.<label>, custom.<key>"

// parseTarget reads a workspace target.
func parseTarget(s string) (target, error) {
	if simpleTargets[s] {
		return target{key: s, kind: kindName, label: s}, nil
	}
	prefix, rest, ok := strings.Cut(s, ".")
	kinds := map[string]targetKind{"emails": kindEmail, "phoneNumbers": kindPhone, "custom": kindCustom}
	kind, known := kinds[prefix]
	switch {
	case s == "externalId" || s == "sourceUrl":
		return target{}, fmt.Errorf("%s is not a field: set mapping.%s instead", s, s)
	case !ok || !known:
		return target{}, fmt.Errorf("unknown target %q (known: %s)", s, targetHelp)
	case strings.TrimSpace(rest) == "" || rest != strings.TrimSpace(rest):
		return target{}, fmt.Errorf("target %q needs a label without surrounding spaces after %q", s, prefix+".")
	}
	return target{key: s, kind: kind, label: rest}, nil
}
