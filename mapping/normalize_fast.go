package mapping

import (
	"strings"
	"sync"
)

// The normalisers' fast paths: the forms most records hold, recognised by
// a scan of their bytes, with the very result the general path (the phone
// number library's regular expressions, net/mail's parser) gives them.
// Anything else takes the general path. normalize_fast_test.go checks
// both paths against each other on many generated values.

// fastPhone returns the E.164 form of a North American number written
// with digits and the usual punctuation: "+1 415 555 0100", or, read in
// the US or Canada, "(415) 555-0100" and "1-415-555-0100". The national
// number must start with 2-9 (an area code); ok is false for anything
// else.
func fastPhone(s, region string) (e164 string, ok bool) {
	var digits [16]byte
	n := 0
	plus := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			if n == len(digits) {
				return "", false
			}
			digits[n] = c
			n++
		case c == '+' && i == 0:
			plus = true
		case c == ' ' || c == '(' || c == ')' || c == '-' || c == '.':
		default:
			return "", false
		}
	}
	d := digits[:n]
	switch {
	case n == 11 && d[0] == '1' && d[1] >= '2':
		if !plus && !nanpRegion(region) {
			return "", false
		}
		d = d[1:]
	case n == 10 && !plus && d[0] >= '2' && nanpRegion(region):
	default:
		return "", false
	}
	var b strings.Builder
	b.Grow(12)
	b.WriteString("+1")
	b.Write(d)
	return b.String(), true
}

// nanpRegion reports whether region is one whose numbers fastPhone reads
// without a country code (the library strips no other national prefix
// than 1 there).
func nanpRegion(region string) bool {
	return strings.EqualFold(region, "US") || strings.EqualFold(region, "CA")
}

// fastEmail returns the canonical form of a plain address: one @ between
// a local part and a domain that are dot-atoms of letters, digits and
// "._%+-" (local) or ".-" (domain), without leading, trailing or doubled
// dots. ok is false for anything else.
func fastEmail(s string) (addr string, ok bool) {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at == len(s)-1 {
		return "", false
	}
	if !dotAtom(s[:at], "._%+-") || !dotAtom(s[at+1:], ".-") {
		return "", false
	}
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s), true
		}
	}
	return s, true
}

// dotAtom reports whether s is letters, digits and extra characters only,
// with no dot at either end and no two dots in a row.
func dotAtom(s, extra string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.' && s[i-1] == '.':
			return false
		case strings.IndexByte(extra, c) >= 0:
		default:
			return false
		}
	}
	return true
}

// e164Seen remembers numbers the general path gave as its result and then
// read back unchanged: such a value, met again (a contact syncd wrote,
// read back from the workspace; a record that holds E.164 already), is
// its own canonical form whatever the region, and skips the library. It
// is bounded: when full it starts over.
var e164Seen = struct {
	sync.RWMutex
	m map[string]struct{}
}{m: map[string]struct{}{}}

// maxE164Seen bounds e164Seen (about 4 MiB).
const maxE164Seen = 1 << 16

// knownE164 reports whether s is a remembered canonical number.
func knownE164(s string) bool {
	if len(s) < 2 || s[0] != '+' {
		return false
	}
	e164Seen.RLock()
	_, ok := e164Seen.m[s]
	e164Seen.RUnlock()
	return ok
}

// rememberE164 records e, a result of the general path that the general
// path read back as itself.
func rememberE164(e string) {
	e164Seen.Lock()
	if len(e164Seen.m) >= maxE164Seen {
		clear(e164Seen.m)
	}
	e164Seen.m[e] = struct{}{}
	e164Seen.Unlock()
}
