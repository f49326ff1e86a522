package mapping

import (
	"errors"
	"fmt"
	"net/mail"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/nyaruka/phonenumbers"
)

// DefaultRegion is the region assumed for phone numbers written without a
// country code, when a field names none.
const DefaultRegion = "US"

// multiSep joins the values of a multi-value custom field in the
// canonical form: the ASCII unit separator, which no user-typed value
// holds.
const multiSep = "\x1f"

// ErrInvalidPhone and ErrInvalidEmail are wrapped by the normalisers'
// errors.
var (
	ErrInvalidPhone = errors.New("invalid phone number")
	ErrInvalidEmail = errors.New("invalid e-mail address")
)

// NormalizePhone returns s in E.164 form (+14155550100). A number without
// a country code is read in region (an ISO 3166 code such as "US"; empty
// means DefaultRegion), with that region's international prefix ("00" in
// DE, "011" in US) and national prefix as the phone number library knows
// them. The number must be possible, in full, for its country
// (phonenumbers.IsPossibleNumber): a number that is possible only locally
// ("555-0100", no area code) is refused, since no E.164 form reaches it.
// Whether the number is assigned (phonenumbers.IsValidNumber) is not
// required, so that test and fictional numbers pass; see invalidPhone. An
// extension is dropped: E.164 has none. An empty s is returned as is.
// The error wraps ErrInvalidPhone and says why, with how to fix it.
func NormalizePhone(s, region string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if region == "" {
		region = DefaultRegion
	}
	if e, ok := fastPhone(s, region); ok {
		return e, nil
	}
	if knownE164(s) {
		return s, nil
	}
	e, err := parsePhone(s, region)
	if err != nil || knownE164(e) {
		return e, err
	}
	// The result must be its own canonical form, or two-way sync would
	// never settle: the library reads some numbers with leading zeros
	// ("0000000" in DE) to an E.164 form that reads back otherwise.
	if again, err := parsePhone(e, DefaultRegion); err != nil || again != e {
		return "", invalidPhone(s, region, "its E.164 form "+e+" does not read back as itself")
	}
	rememberE164(e)
	return e, nil
}

// parsePhone is NormalizePhone's general path, through the phone number
// library.
func parsePhone(s, region string) (string, error) {
	region = strings.ToUpper(region)
	num, err := phonenumbers.Parse(s, region)
	if err != nil {
		if errors.Is(err, phonenumbers.ErrNotANumber) {
			return "", invalidPhone(s, region, "not a phone number")
		}
		return "", invalidPhone(s, region, err.Error())
	}
	switch phonenumbers.IsPossibleNumberWithReason(num) {
	case phonenumbers.IS_POSSIBLE:
	case phonenumbers.IS_POSSIBLE_LOCAL_ONLY:
		return "", invalidPhone(s, region, "only possible as a local number (no area code), which has no E.164 form; add the area code")
	case phonenumbers.TOO_SHORT:
		return "", invalidPhone(s, region, "too short")
	case phonenumbers.TOO_LONG:
		return "", invalidPhone(s, region, "too long")
	case phonenumbers.INVALID_COUNTRY_CODE:
		return "", invalidPhone(s, region, "unknown country code")
	default:
		return "", invalidPhone(s, region, "impossible length for its country")
	}
	return phonenumbers.Format(num, phonenumbers.E164), nil
}

// invalidPhone is the error for s, read in region, that is not a phone
// number for why. A number written with the international prefix 00 that
// region does not use ("0049 30 1234567" read in US) gets a hint naming
// how the region dials it, from the library's data.
func invalidPhone(s, region, why string) error {
	msg := fmt.Sprintf("%q read in region %s: %s", s, region, why)
	if rest, ok := strings.CutPrefix(s, "00"); ok {
		if n, err := phonenumbers.Parse("+"+rest, region); err == nil && phonenumbers.IsValidNumber(n) {
			msg += fmt.Sprintf(" (00 is not the international prefix in %s, where the number is dialled %s): write it as %s, or set the field's region to the number's country",
				region, phonenumbers.FormatOutOfCountryCallingNumber(n, region), phonenumbers.Format(n, phonenumbers.INTERNATIONAL))
		}
	}
	return fmt.Errorf("%w %s", ErrInvalidPhone, msg)
}

// NormalizeEmail returns the canonical form of an e-mail address: the bare
// address (a display name, "Ann <ann@example.com>", is dropped), trimmed
// and lower-cased as a whole. An empty s is returned as is.
func NormalizeEmail(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if addr, ok := fastEmail(s); ok {
		return addr, nil
	}
	return parseEmail(s)
}

// parseEmail is NormalizeEmail's general path, through net/mail.
func parseEmail(s string) (string, error) {
	a, err := mail.ParseAddress(s)
	if err != nil {
		return "", fmt.Errorf("%w %q", ErrInvalidEmail, s)
	}
	addr := strings.ToLower(a.Address)
	at := strings.LastIndexByte(addr, '@')
	if at <= 0 || at == len(addr)-1 || strings.ContainsAny(addr, " \t\r\n\"") {
		return "", fmt.Errorf("%w %q", ErrInvalidEmail, s)
	}
	// The canonical form must read back as itself: refuse addresses that
	// only parse quoted.
	if b, err := mail.ParseAddress(addr); err != nil || b.Address != addr || b.Name != "" {
		return "", fmt.Errorf("%w %q", ErrInvalidEmail, s)
	}
	return addr, nil
}

// value is a record value on its way through the transforms: one string,
// or a list of strings (a multi-value field).
type value struct {
	s      string
	list   []string
	isList bool
}

func scalar(s string) value   { return value{s: s} }
func listOf(l []string) value { return value{list: l, isList: true} }
func (v value) empty() bool   { return len(v.each()) == 0 }

// blank reports whether s holds nothing but white space and the
// multi-value separator: canonically, nothing.
func blank(s string) bool {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r == rune(multiSep[0]) }) == ""
}

// each returns the value's non-blank strings.
func (v value) each() []string {
	if !v.isList {
		if blank(v.s) {
			return nil
		}
		return []string{v.s}
	}
	out := make([]string, 0, len(v.list))
	for _, s := range v.list {
		if !blank(s) {
			out = append(out, s)
		}
	}
	return out
}

// toValue converts a record's value deterministically: strings as they
// are, integers and floats in their shortest decimal form, booleans as
// true/false, times in UTC RFC 3339 with the fraction only when there is
// one, string lists as lists, nil as empty.
func toValue(x any) value {
	switch x := x.(type) {
	case nil:
		return scalar("")
	case string:
		return scalar(x)
	case []string:
		return listOf(append([]string(nil), x...))
	case []any:
		l := make([]string, 0, len(x))
		for _, e := range x {
			l = append(l, toValue(e).s)
		}
		return listOf(l)
	default:
		return scalar(toString(x))
	}
}

func toString(x any) string {
	switch x := x.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []string:
		return strings.Join(x, ",")
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(x)
}

// canonicalMulti is the canonical form of a multi-value field: values
// trimmed, empty ones dropped, sorted, duplicates removed, joined with
// multiSep.
func canonicalMulti(vals []string) string {
	out := make([]string, 0, len(vals))
	for _, s := range vals {
		for _, part := range strings.Split(s, multiSep) {
			if p := strings.TrimSpace(part); p != "" {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	n := 0
	for i, s := range out {
		if i == 0 || s != out[n-1] {
			out[n] = s
			n++
		}
	}
	return strings.Join(out[:n], multiSep)
}

// splitMulti is the inverse of canonicalMulti.
func splitMulti(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, multiSep)
}
