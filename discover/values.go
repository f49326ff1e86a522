package discover

import (
	"fmt"
	"strings"
)

// cellSeparators are what exporters put between several values in one
// cell, most telling first: Google Contacts' " ::: ", a line break typed
// in a spreadsheet cell, ";" and ",".
var cellSeparators = []string{" ::: ", "\n", ";", ","}

// maxCellValues bounds the targets proposed for one multi-value column.
const maxCellValues = 4

// cellValues says whether a column's cells hold several values of the
// kind ok tells: the separator ("" for one value a cell), the most values
// one cell holds, and every value of the samples.
func cellValues(f Field, ok func(string) bool) (sep string, most int, parts []string) {
	seps := cellSeparators
	if f.Separator != "" {
		seps = append([]string{f.Separator}, seps...)
	}
	for _, s := range seps {
		split, n, multi := splitSamples(f.Samples, s)
		if multi && share(split, ok) >= 0.6 {
			return s, n, split
		}
	}
	return "", 1, f.Samples
}

// splitSamples splits each sample at sep into its non-empty trimmed
// parts: all of them, the most in one sample, and whether one sample
// had several.
func splitSamples(samples []string, sep string) ([]string, int, bool) {
	var out []string
	most := 0
	for _, s := range samples {
		n := 0
		for _, p := range strings.Split(s, sep) {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
				n++
			}
		}
		most = max(most, n)
	}
	return out, most, most > 1
}

// labelWordsOf are the words an exporter's label column says, by label.
var labelWordsOf = map[string]string{
	"mobile": "mobile", "cell": "mobile", "cellular": "mobile", "mobil": "mobile", "handy": "mobile", "portable": "mobile", "móvil": "mobile", "movil": "mobile", "celular": "mobile", "cellulare": "mobile", "mobiel": "mobile",
	"work": "work", "business": "work", "office": "work", "arbeit": "work", "geschäftlich": "work", "büro": "work", "travail": "work", "trabajo": "work", "lavoro": "work", "werk": "work",
	"home": "home", "personal": "home", "private": "home", "privat": "home", "domicile": "home", "casa": "home", "thuis": "home", "maison": "home",
	"main": "main", "other": "other", "andere": "other", "autre": "other", "otro": "other", "altro": "other",
}

// labelFromColumn is the label most rows give a value in the label
// column (Google's "Phone 1 - Label": "Mobile", "* Work"), with why; ""
// when the column is empty or unknown.
func labelFromColumn(col Field, value string) (string, string) {
	counts := map[string]int{}
	var order []string
	total := 0
	for _, s := range col.Samples {
		l := ""
		for _, w := range words(s) {
			if x, ok := labelWordsOf[w]; ok {
				l = x
				break
			}
		}
		if l == "" {
			l = "other"
		}
		if counts[l] == 0 {
			order = append(order, l)
		}
		counts[l]++
		total++
	}
	best := ""
	for _, l := range order {
		if best == "" || counts[l] > counts[best] {
			best = l
		}
	}
	if best == "" {
		return "", ""
	}
	if counts[best] == total {
		return best, fmt.Sprintf("%q labels it %s", col.Name, best)
	}
	return best, fmt.Sprintf("%q labels it %s in %d of %d rows read (one label for the column)", col.Name, best, counts[best], total)
}

// courtesyWords are courtesy titles, lower-cased without their dot.
var courtesyWords = set("mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame", "herr", "frau", "m", "mme", "mlle", "sr", "sra", "srta", "sig", "sigra", "dott", "dhr", "mevr", "mw")

// looksCourtesy: a courtesy title, possibly with an academic one after
// it ("Dr.", "Frau Dr.", "Mr").
func looksCourtesy(s string) bool {
	ws := words(s)
	if len(ws) == 0 || len(ws) > 3 {
		return false
	}
	for _, w := range ws {
		if !courtesyWords[w] {
			return false
		}
	}
	return true
}

// courtesyNames are names of columns that hold the courtesy title.
var courtesyNames = set("salutation", "anrede", "civilité", "civilite", "tratamiento", "saludo", "aanhef", "nameprefix", "prefix", "honorific")

// courtesyTitle says why a column named like a title is the courtesy
// title rather than the job title: by its name, its values, or a job
// title column beside it; "" when it is not.
func courtesyTitle(f Field, joined string, all []Field) string {
	if courtesyNames[joined] {
		return fmt.Sprintf("%q is the courtesy title (Mr., Dr.), not the job title", f.Name)
	}
	if joined != "title" && joined != "titel" && joined != "titre" && joined != "titulo" && joined != "título" {
		return ""
	}
	if len(f.Samples) > 0 && share(f.Samples, looksCourtesy) >= 0.5 {
		return fmt.Sprintf("%.0f%% of the samples are courtesy titles (Mr., Dr.), not job titles", share(f.Samples, looksCourtesy)*100)
	}
	for _, o := range all {
		if o.Name == f.Name {
			continue
		}
		switch strings.Join(words(o.Name), "") {
		case "jobtitle", "position", "jobrole", "occupation", "designation", "berufsbezeichnung", "funktion", "poste", "cargo", "puesto", "functie":
			return fmt.Sprintf("the courtesy title (Mr., Dr.): %q is the job title", o.Name)
		}
	}
	return ""
}
