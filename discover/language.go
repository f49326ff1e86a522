package discover

import (
	"fmt"
	"strings"
)

// languageWords are column name words (joined, see words) that only one
// language among those init knows uses, with the language and the region
// its national phone numbers most likely are from.
var languageWords = []struct {
	language, region string
	words            []string
}{
	{"German", "DE", []string{"vorname", "nachname", "anrede", "kundennummer", "kundennr", "firma", "handy", "telefon", "strasse", "straße", "ort", "plz", "mobiltelefon", "firmenname"}},
	{"French", "FR", []string{"prénom", "prenom", "civilité", "civilite", "société", "societe", "courriel", "téléphone", "portable", "fonction", "nclient", "numéroclient", "entreprise", "ville", "codepostal"}},
	{"Spanish", "ES", []string{"nombre", "apellido", "apellidos", "empresa", "teléfono", "móvil", "movil", "cargo", "puesto", "númerodecliente", "numerodecliente", "correo", "ciudad"}},
	{"Italian", "IT", []string{"cognome", "azienda", "cellulare", "ruolo", "numerocliente", "codicecliente", "città", "indirizzo"}},
	{"Dutch", "NL", []string{"voornaam", "achternaam", "bedrijf", "telefoon", "mobiel", "klantnummer", "functie", "woonplaats"}},
}

// languageRegion is the region the header's language implies: the
// language most of whose words it has, at least two.
func languageRegion(header []string) (string, string) {
	best, bestN := -1, 1
	for i, l := range languageWords {
		n := 0
		for _, h := range header {
			if contains(l.words, strings.Join(words(h), "")) {
				n++
			}
		}
		if n > bestN {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return "", ""
	}
	l := languageWords[best]
	return l.region, fmt.Sprintf("the header is in %s (%d column names)", l.language, bestN)
}

// countryNames are the ways address columns name the countries whose
// numbers init reads most, lower-cased, by region.
var countryNames = map[string]string{
	"united kingdom": "GB", "uk": "GB", "great britain": "GB", "england": "GB", "scotland": "GB", "wales": "GB", "gb": "GB",
	"united states": "US", "united states of america": "US", "usa": "US", "us": "US",
	"germany": "DE", "deutschland": "DE", "de": "DE", "france": "FR", "fr": "FR", "spain": "ES", "españa": "ES", "espana": "ES", "es": "ES",
	"italy": "IT", "italia": "IT", "it": "IT", "netherlands": "NL", "nederland": "NL", "the netherlands": "NL", "nl": "NL",
	"canada": "CA", "australia": "AU", "ireland": "IE", "switzerland": "CH", "schweiz": "CH", "suisse": "CH", "austria": "AT", "österreich": "AT",
	"belgium": "BE", "belgique": "BE", "belgië": "BE", "india": "IN", "brazil": "BR", "brasil": "BR", "mexico": "MX", "méxico": "MX",
}

// countryRegion is the region most rows' address country names, when
// a column named like a country holds one for most rows read.
func countryRegion(header []string, rows [][]string) (string, string) {
	for i, h := range header {
		ws := words(h)
		if !contains(ws, "country") && !contains(ws, "land") && !contains(ws, "pays") && !contains(ws, "país") && !contains(ws, "paese") {
			continue
		}
		counts := map[string]int{}
		n := 0
		for _, r := range rows {
			if i >= len(r) || strings.TrimSpace(r[i]) == "" {
				continue
			}
			n++
			if c, ok := countryNames[strings.ToLower(strings.TrimSpace(r[i]))]; ok {
				counts[c]++
			}
		}
		for c, k := range counts {
			if k*2 > n {
				return c, fmt.Sprintf("%q names it in %d of %d rows", h, k, n)
			}
		}
	}
	return "", ""
}
