package discover

import (
	"fmt"
	"sort"
	"strings"

	"github.com/syncd-io/syncd/workspace"
)

// Guess is one proposed mapping entry.
type Guess struct {
	// Target is the workspace field: firstName, emails.work, custom.<key>.
	Target string
	// From is the record field.
	From string
	// Transform and Region are the entry's; Region only for phones.
	Transform []string
	Region    string
	// Why is the short reason written beside it.
	Why string
}

// Unmapped is a record field the proposal leaves out, with why.
type Unmapped struct {
	Field, Why string
}

// Proposal is a proposed mapping.
type Proposal struct {
	Guesses  []Guess
	Unmapped []Unmapped
	// Region is the phone region used and RegionWhy how it was chosen.
	Region, RegionWhy string
}

// Propose guesses a mapping for the source's fields: names first (the
// synonyms above, then the workspace's custom fields by key or name),
// then samples (e-mail addresses, phone numbers). Each target is taken
// once, by the first field in the source's order. region, when set, is
// the phone region; else it is guessed from the phone samples.
func Propose(src *Source, custom []workspace.CustomFieldDefinition, region string) Proposal {
	var p Proposal
	taken := map[string]string{}
	var phones []int
	add := func(g Guess) bool {
		if other, ok := taken[g.Target]; ok {
			p.Unmapped = append(p.Unmapped, Unmapped{g.From, fmt.Sprintf("%s is taken by %s", g.Target, other)})
			return false
		}
		taken[g.Target] = g.From
		p.Guesses = append(p.Guesses, g)
		return true
	}
	customBy := map[string]workspace.CustomFieldDefinition{}
	for _, d := range custom {
		customBy[strings.Join(words(d.Key), "")] = d
		if n := strings.Join(words(d.Name), ""); n != "" {
			if _, ok := customBy[n]; !ok {
				customBy[n] = d
			}
		}
	}
	// free is the first of the targets kind.label, kind.other (unless
	// numbered), then kind.label2, kind.label3... not taken yet.
	free := func(kind, l string, numbered bool) string {
		if _, ok := taken[kind+"."+l]; !ok {
			return kind + "." + l
		}
		if _, ok := taken[kind+".other"]; !ok && !numbered {
			return kind + ".other"
		}
		for n := 2; ; n++ {
			if _, ok := taken[fmt.Sprintf("%s.%s%d", kind, l, n)]; !ok {
				return fmt.Sprintf("%s.%s%d", kind, l, n)
			}
		}
	}
	regionSamples := map[string][]string{}
	// addValues proposes a column of e-mail addresses or phone numbers:
	// one target, or, when its cells hold several values, one per value
	// (split, then pick:n), each with its own label.
	addValues := func(f Field, kind, l, why string) {
		ok, tr := looksEmail, []string(nil)
		if kind == "phoneNumbers" {
			ok, tr = looksPhone, []string{"e164"}
		}
		sep, most, parts := cellValues(f, ok)
		regionSamples[f.Name] = parts
		if sep == "" {
			g := Guess{Target: free(kind, l, f.Hint != ""), From: f.Name, Transform: tr, Why: why}
			if add(g) && kind == "phoneNumbers" {
				phones = append(phones, len(p.Guesses)-1)
			}
			return
		}
		n := min(most, maxCellValues)
		for i := 1; i <= n; i++ {
			t := free(kind, l, f.Hint != "")
			if i > 1 {
				t = free(kind, fmt.Sprintf("%s%d", l, i), true)
			}
			g := Guess{Target: t, From: f.Name, Transform: append([]string{"split:" + sep, fmt.Sprintf("pick:%d", i)}, tr...),
				Why: fmt.Sprintf("%s; its cells hold up to %d values split by %q: value %d", why, most, sep, i)}
			if i == n && most > n {
				g.Why += fmt.Sprintf(" (values after the %d-th are left out)", n)
			}
			if add(g) && kind == "phoneNumbers" {
				phones = append(phones, len(p.Guesses)-1)
			}
		}
	}
	byName := map[string]Field{}
	labelOf := map[string]string{} // a label column -> the column it labels
	for _, f := range src.Fields {
		byName[f.Name] = f
		if f.LabelFrom != "" {
			labelOf[f.LabelFrom] = f.Name
		}
	}
	exportName := strings.SplitN(src.Export, " (", 2)[0] + "'s"
	if strings.HasSuffix(exportName, "s's") {
		exportName = strings.TrimSuffix(exportName, "s") // Google Contacts'
	}
	// byHint proposes a column as a recognised export says.
	byHint := func(f Field) {
		kind, arg, _ := strings.Cut(f.Hint, ":")
		switch kind {
		case "firstName", "lastName", "company", "role":
			add(Guess{Target: kind, From: f.Name, Why: fmt.Sprintf("%s column for the %s", exportName, targetWhat[kind])})
		case "email", "phone":
			target, what := "emails", "e-mail"
			if kind == "phone" {
				target, what = "phoneNumbers", "phone"
			}
			l, why := arg, fmt.Sprintf("%s %s column", exportName, what)
			if l == "" {
				l = "work"
				if lf, ok := byName[f.LabelFrom]; ok {
					if got, lwhy := labelFromColumn(lf, f.Name); got != "" {
						l, why = got, why+"; "+lwhy
					}
				}
			}
			addValues(f, target, l, why)
		case "id":
			p.Unmapped = append(p.Unmapped, Unmapped{f.Name, exportName + " record id, not the row id chosen"})
		case "custom":
			if d, ok := customFor(arg, customBy); ok {
				g := Guess{Target: "custom." + d.Key, From: f.Name, Why: fmt.Sprintf("%s %s, to the workspace's custom field %q (%s)", exportName, arg, d.Name, d.Type)}
				if f.Separator != "" && d.Type == workspace.FieldMultiSelect {
					g.Transform = []string{"split:" + f.Separator}
				}
				add(g)
				return
			}
			p.Unmapped = append(p.Unmapped, Unmapped{f.Name, fmt.Sprintf("%s; the workspace has no custom field for them (create one, then map custom.<key>: %s)", arg, f.Name)})
		default:
			p.Unmapped = append(p.Unmapped, Unmapped{f.Name, arg})
		}
	}
	// What a recognised export says of its columns goes first: its
	// columns take their targets before others named like them.
	fields := make([]Field, 0, len(src.Fields))
	for _, f := range src.Fields {
		if f.Hint != "" {
			fields = append(fields, f)
		}
	}
	for _, f := range src.Fields {
		if f.Hint == "" {
			fields = append(fields, f)
		}
	}
	var fullName, primary []Field
	for _, f := range fields {
		if _, ok := src.Skip[f.Name]; ok {
			continue
		}
		if of, ok := labelOf[f.Name]; ok {
			p.Unmapped = append(p.Unmapped, Unmapped{f.Name, fmt.Sprintf("each row's label of %q: the label most rows give is the target's", of)})
			continue
		}
		if f.Hint != "" {
			byHint(f)
			continue
		}
		ws := words(f.Name)
		if len(ws) > 1 && entityWords[ws[0]] {
			// A CRM export names the record before the field, in the
			// user's language ("Person - Vorname", "Contact - Email").
			ws = ws[1:]
		}
		joined := strings.Join(ws, "")
		if joined == "id" || joined == "hsobjectid" {
			continue // the record's id, the externalId already
		}
		_, _, emailParts := cellValues(f, looksEmail)
		_, _, phoneParts := cellValues(f, looksPhone)
		emails := share(emailParts, looksEmail)
		phonesShare := share(phoneParts, looksPhone)
		if contains(ws, "primary") && len(ws) > 1 {
			primary = append(primary, f)
			continue
		}
		if contains(ws, "fax") {
			p.Unmapped = append(p.Unmapped, Unmapped{f.Name, "a fax number"})
			continue
		}
		if why := courtesyTitle(f, joined, src.Fields); why != "" {
			p.Unmapped = append(p.Unmapped, Unmapped{f.Name, why})
			continue
		}
		if g, ok := bySynonym(f, joined); ok {
			add(g)
			continue
		}
		if only(ws, emailWords, emailAlso) || emails >= 0.6 {
			why := fmt.Sprintf("%q names an e-mail address", f.Name)
			if !only(ws, emailWords, emailAlso) {
				why = fmt.Sprintf("%.0f%% of the samples are e-mail addresses", emails*100)
			}
			addValues(f, "emails", label(ws, "work"), why)
			continue
		}
		if only(ws, phoneWords, labelWords) || (phonesShare >= 0.6 && !f.Time) {
			why := fmt.Sprintf("%q names a phone number", f.Name)
			if !only(ws, phoneWords, labelWords) {
				why = fmt.Sprintf("%.0f%% of the samples are phone numbers", phonesShare*100)
			}
			addValues(f, "phoneNumbers", label(ws, "work"), why)
			continue
		}
		if d, ok := customBy[strings.Join(words(f.Label), "")]; ok && f.Label != "" {
			add(Guess{Target: "custom." + d.Key, From: f.Name, Why: fmt.Sprintf("%q matches the workspace's custom field %q (%s)", f.Label, d.Name, d.Type)})
			continue
		}
		if d, ok := customBy[joined]; ok {
			add(Guess{Target: "custom." + d.Key, From: f.Name, Why: fmt.Sprintf("matches the workspace's custom field %q (%s)", d.Name, d.Type)})
			continue
		}
		if nameWords[joined] {
			fullName = append(fullName, f)
			continue
		}
		p.Unmapped = append(p.Unmapped, Unmapped{f.Name, unmappedWhy(f)})
	}
	for _, f := range primary {
		// emails.primary, phones.primary: the primary one of the values
		// the labelled fields hold; mapped only when no labelled one is.
		kind, target, what := emailWords, "emails.work", "e-mail address"
		if only(words(f.Name), phoneWords, labelWords) {
			kind, target, what = phoneWords, "phoneNumbers.work", "phone number"
		}
		mapped := false
		for _, g := range p.Guesses {
			if strings.HasPrefix(g.Target, strings.Split(target, ".")[0]+".") {
				mapped = true
			}
		}
		switch {
		case mapped:
			p.Unmapped = append(p.Unmapped, Unmapped{f.Name, "the primary " + what + ", also in the labelled fields mapped"})
		case only(words(f.Name), kind, emailAlso) || only(words(f.Name), kind, labelWords):
			g := Guess{Target: target, From: f.Name, Why: fmt.Sprintf("%q is the primary %s", f.Name, what)}
			if kind["phone"] {
				g.Transform = []string{"e164"}
				if add(g) {
					phones = append(phones, len(p.Guesses)-1)
				}
				continue
			}
			add(g)
		default:
			p.Unmapped = append(p.Unmapped, Unmapped{f.Name, unmappedWhy(f)})
		}
	}
	for _, f := range fullName {
		if _, ok := taken["firstName"]; !ok {
			add(Guess{Target: "firstName", From: f.Name, Why: fmt.Sprintf("%q holds the whole name and no first name field was found", f.Name)})
			continue
		}
		p.Unmapped = append(p.Unmapped, Unmapped{f.Name, "the whole name; first and last name are mapped"})
	}
	if len(phones) > 0 {
		var samples []string
		seen := map[string]bool{}
		for _, i := range phones {
			from := p.Guesses[i].From
			if seen[from] {
				continue
			}
			seen[from] = true
			if parts, ok := regionSamples[from]; ok {
				samples = append(samples, parts...)
				continue
			}
			samples = append(samples, byName[from].Samples...)
		}
		p.Region, p.RegionWhy = region, "given with --region"
		if region == "" {
			p.Region, p.RegionWhy = guessRegion(samples, src.RegionHint, src.RegionHintWhy, src.RegionHintStrong)
		}
		for _, i := range phones {
			p.Guesses[i].Region = p.Region
			if s := invalidShare(p.Guesses[i].From, regionSamples, src, p.Region); s != "" {
				p.Guesses[i].Why += "; " + s
			}
		}
	}
	sort.SliceStable(p.Guesses, func(i, j int) bool { return targetRank(p.Guesses[i].Target) < targetRank(p.Guesses[j].Target) })
	return p
}

// targetRank orders the written mapping as a contact reads.
func targetRank(t string) int {
	for i, p := range []string{"firstName", "lastName", "company", "role", "emails.", "phoneNumbers.", "custom."} {
		if strings.HasPrefix(t, p) {
			return i
		}
	}
	return 99
}
