package faults

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"

	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace"
)

// record is the model of one person's record: what both sides must hold
// for it at the end. Its e-mail never changes and identifies it on both
// sides.
type record struct {
	email string
	want  e2e.Values
	live  bool
	// rowID and contactID, once known.
	rowID     int64
	contactID string
	// origin tells where it was made ("table" or "app"), for messages.
	origin string
}

// editable fields: the table's column and the workspace's field.
var fields = []struct{ column, target string }{
	{"first_name", "firstName"}, {"last_name", "lastName"}, {"company", "company"}, {"phone", "phone"},
}

// model is every record made in a run.
type model struct {
	seed int64
	rng  *rand.Rand
	n    int
	recs []*record
	// log of the edits, for failure messages.
	log []string
}

func newModel(seed int64) *model {
	return &model{seed: seed, rng: rand.New(rand.NewSource(seed))}
}

// next returns a fresh value for a field.
func (m *model) next(field string) string {
	m.n++
	switch field {
	case "first_name":
		return fmt.Sprintf("F%d-%d", m.seed, m.n)
	case "last_name":
		return fmt.Sprintf("L%d-%d", m.seed, m.n)
	case "company":
		return fmt.Sprintf("Co %d-%d", m.seed, m.n)
	case "phone":
		return fmt.Sprintf("+1415%03d%04d", 200+m.seed%700, m.n%10000)
	case "email":
		return fmt.Sprintf("p%d-%d@example.com", m.seed, m.n)
	}
	panic(field)
}

func (m *model) newValues() e2e.Values {
	return e2e.Values{First: m.next("first_name"), Last: m.next("last_name"), Company: m.next("company"),
		Email: m.next("email"), Phone: m.next("phone")}
}

func (m *model) add(origin string, v e2e.Values) *record {
	r := &record{email: v.Email, want: v, live: true, origin: origin}
	m.recs = append(m.recs, r)
	return r
}

func (m *model) logf(format string, args ...any) {
	m.log = append(m.log, fmt.Sprintf(format, args...))
}

// live returns the live records, in creation order.
func (m *model) live() []*record {
	var out []*record
	for _, r := range m.recs {
		if r.live {
			out = append(out, r)
		}
	}
	return out
}

func set(v *e2e.Values, column, value string) {
	switch column {
	case "first_name":
		v.First = value
	case "last_name":
		v.Last = value
	case "company":
		v.Company = value
	case "phone":
		v.Phone = value
	default:
		panic(column)
	}
}

// check compares the model with both sides: each live record is one
// live row and one contact holding its latest values, each deleted one is
// gone from both. It returns every difference.
func (m *model) check(rows []e2e.Row, contacts []workspace.Contact) []string {
	var problems []string
	rowsBy := map[string][]e2e.Row{}
	for _, r := range rows {
		if !r.Deleted {
			rowsBy[strings.ToLower(r.Email)] = append(rowsBy[strings.ToLower(r.Email)], r)
		}
	}
	contactsBy := map[string][]workspace.Contact{}
	for _, c := range contacts {
		e := strings.ToLower(e2e.ContactValues(c).Email)
		contactsBy[e] = append(contactsBy[e], c)
	}
	for _, r := range m.recs {
		rs, cs := rowsBy[r.email], contactsBy[r.email]
		if !r.live {
			if len(rs) > 0 || len(cs) > 0 {
				problems = append(problems, fmt.Sprintf("%s (made in the %s) was deleted, yet %d rows and %d contacts hold it", r.email, r.origin, len(rs), len(cs)))
			}
			continue
		}
		if len(rs) != 1 {
			problems = append(problems, fmt.Sprintf("%s (made in the %s): %d live rows, want 1", r.email, r.origin, len(rs)))
		} else if rs[0].Values != r.want {
			problems = append(problems, fmt.Sprintf("%s (made in the %s): row %d holds %+v, the latest edits say %+v", r.email, r.origin, rs[0].ID, rs[0].Values, r.want))
		}
		if len(cs) != 1 {
			problems = append(problems, fmt.Sprintf("%s (made in the %s): %d contacts, want 1", r.email, r.origin, len(cs)))
		} else if got := e2e.ContactValues(cs[0]); got != r.want {
			problems = append(problems, fmt.Sprintf("%s (made in the %s): contact %s holds %+v, the latest edits say %+v", r.email, r.origin, cs[0].ID, got, r.want))
		}
	}
	known := map[string]bool{}
	for _, r := range m.recs {
		known[r.email] = true
	}
	var extra []string
	for e := range contactsBy {
		if !known[e] {
			extra = append(extra, e)
		}
	}
	sort.Strings(extra)
	for _, e := range extra {
		problems = append(problems, fmt.Sprintf("contact with e-mail %q that no one made", e))
	}
	return problems
}

// agree is e2e.Agree: the table and the workspace agree with each other.
func agree(rows []e2e.Row, contacts []workspace.Contact) []string { return e2e.Agree(rows, contacts) }
