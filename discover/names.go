package discover

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
)

// words splits a field name into lower-case words: at non-letters and
// digits, and at lower-to-upper case changes ("MobilePhone", "mail_addr",
// "E-Mail", "phones.mobile").
func words(name string) []string {
	var out []string
	var cur []rune
	rs := []rune(name)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// synonyms are the joined words of a field name that name a contact
// field, by target.
var synonyms = []struct {
	target, what string
	names        []string
}{
	{"firstName", "first name", []string{"firstname", "givenname", "forename", "fname", "first", "given", "christianname", "vorname", "prenom", "prénom", "nombre", "voornaam", "primeironome", "roepnaam"}},
	{"lastName", "last name", []string{"lastname", "familyname", "surname", "lname", "last", "family", "nachname", "nom", "nomdefamille", "familienname", "apellido", "apellidos", "cognome", "achternaam", "sobrenome"}},
	{"company", "company", []string{"company", "companyname", "organisation", "organization", "org", "orgname", "organisationname", "organizationname", "employer", "business", "businessname", "firm", "accountname", "firma", "firmenname", "unternehmen", "société", "societe", "entreprise", "raisonsociale", "empresa", "azienda", "bedrijf", "organisatie", "companhia"}},
	{"role", "role", []string{"title", "jobtitle", "role", "position", "jobrole", "job", "occupation", "designation", "berufsbezeichnung", "funktion", "poste", "fonction", "cargo", "puesto", "ruolo", "qualifica", "functie", "functietitel"}},
}

// emailWords and phoneWords: a name made only of these (and label words)
// names an e-mail address or a phone number.
var (
	emailWords = set("email", "emails", "mail", "mails", "emailaddress", "courriel", "correo", "emailadresse", "mailadresse", "emailadres", "mailadres")
	emailAlso  = set("e", "addr", "address", "adr", "work", "home", "other", "main", "office", "business", "personal", "private", "primary", "direct", "contact",
		"adresse", "adres", "de", "direccion", "dirección", "electronico", "electrónico", "indirizzo", "endereco", "endereço", "privat", "geschäftlich", "büro")
	phoneWords = set("phone", "phones", "telephone", "tel", "number", "no", "num", "nr", "mobile", "cell", "cellphone", "mobilephone", "handy", "phonenumber", "telefon", "mobil",
		"telefonnummer", "rufnummer", "handynummer", "mobilnummer", "mobiltelefon", "téléphone", "tél", "portable", "teléfono", "telefono", "móvil", "movil", "celular", "cellulare", "telefoon", "mobiel", "nummer", "numéro", "número", "numero")
	mobileWord = set("mobile", "cell", "cellphone", "mobilephone", "handy", "mobil", "handynummer", "mobilnummer", "mobiltelefon", "portable", "móvil", "movil", "celular", "cellulare", "mobiel")
	labelWords = set("work", "home", "other", "main", "office", "business", "personal", "private", "primary", "direct", "contact", "mobile", "privat", "geschäftlich", "büro", "festnetz")
	nameWords  = set("name", "fullname", "contactname", "displayname", "personname")
)

// entityWords are the record names a CRM export puts before its fields.
var entityWords = set("person", "contact", "kontakt", "persona", "personne", "lead")

func set(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}

// only reports whether every word is in one of the sets, and one at least
// in the first.
func only(ws []string, kind map[string]bool, also map[string]bool) bool {
	hit := false
	for _, w := range ws {
		switch {
		case kind[w]:
			hit = true
		case also[w]:
		default:
			return false
		}
	}
	return hit
}

// label picks the label of an e-mail or phone field from its words.
func label(ws []string, def string) string {
	for _, w := range ws {
		switch {
		case mobileWord[w]:
			return "mobile"
		case w == "home" || w == "work" || w == "other" || w == "main":
			return w
		case w == "office" || w == "business" || w == "direct" || w == "geschäftlich" || w == "büro":
			return "work"
		case w == "personal" || w == "private" || w == "privat" || w == "festnetz":
			return "home"
		}
	}
	return def
}

var emailRE = regexp.MustCompile(`^[^@\s<>]+@[^@\s<>]+\.[^@\s<>]+$`)

// share is the share of samples that pass ok, 0 without samples.
func share(samples []string, ok func(string) bool) float64 {
	if len(samples) == 0 {
		return 0
	}
	n := 0
	for _, s := range samples {
		if ok(s) {
			n++
		}
	}
	return float64(n) / float64(len(samples))
}

func looksEmail(s string) bool { return emailRE.MatchString(s) }

var phoneChars = regexp.MustCompile(`^\+?[0-9 ().\-/]{6,24}$`)

// looksPhone: the characters of a phone number with 7 to 15 digits, not a
// date.
func looksPhone(s string) bool {
	if !phoneChars.MatchString(s) || dateLike.MatchString(s) {
		return false
	}
	d := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			d++
		}
	}
	return d >= 7 && d <= 15
}

var dateLike = regexp.MustCompile(`^\d{4}[-/.]\d{1,2}[-/.]\d{1,2}$|^\d{1,2}[-/.]\d{1,2}[-/.]\d{4}$`)

// invalidShare says how many samples of a phone field do not read as a
// number in region, "" when all do.
func invalidShare(field string, parts map[string][]string, src *Source, region string) string {
	for _, f := range src.Fields {
		if f.Name != field || len(f.Samples) == 0 {
			continue
		}
		samples := f.Samples
		if ps, ok := parts[field]; ok {
			samples = ps
		}
		bad := 0
		for _, s := range samples {
			if _, err := mapping.NormalizePhone(s, region); err != nil {
				bad++
			}
		}
		if bad > 0 {
			return fmt.Sprintf("%d of %d samples are no number in %s and will be left out with a field warning", bad, len(samples), region)
		}
	}
	return ""
}

// targetWhat names the simple targets in reasons.
var targetWhat = map[string]string{"firstName": "first name", "lastName": "last name", "company": "company", "role": "job title"}

// customNames are the names of custom fields that take what an export's
// "custom:<what>" column holds.
var customNames = map[string][]string{
	"notes":  {"notes", "note", "comments", "comment", "remarks", "notizen", "bemerkungen", "description"},
	"labels": {"labels", "label", "tags", "tag", "groups", "categories", "groupmembership"},
}

// customFor finds the workspace's custom field for what.
func customFor(what string, by map[string]workspace.CustomFieldDefinition) (workspace.CustomFieldDefinition, bool) {
	for _, n := range customNames[what] {
		if d, ok := by[n]; ok {
			return d, true
		}
	}
	return workspace.CustomFieldDefinition{}, false
}

func bySynonym(f Field, joined string) (Guess, bool) {
	for _, s := range synonyms {
		for _, n := range s.names {
			if joined == n {
				why := fmt.Sprintf("%q is a usual name for the %s", f.Name, s.what)
				if joined == strings.ToLower(strings.ReplaceAll(s.target, "N", "n")) {
					why = fmt.Sprintf("%q is the %s", f.Name, s.what)
				}
				if f.Time {
					return Guess{}, false
				}
				return Guess{Target: s.target, From: f.Name, Why: why}, true
			}
		}
	}
	return Guess{}, false
}

func unmappedWhy(f Field) string {
	switch {
	case f.Time:
		return "a date or time"
	case len(f.Samples) == 0:
		return "no guess; empty in the records read"
	}
	s := f.Samples[0]
	if len(s) > 30 {
		s = s[:30] + "..."
	}
	return fmt.Sprintf("no guess (e.g. %q)", s)
}
