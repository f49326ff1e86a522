package e2e

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/syncd-io/syncd/workspace"
)

// ContactValues reads a contact's synced fields: its work e-mail and
// work phone, or the first of each when none is labelled work.
func ContactValues(c workspace.Contact) Values {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	item := func(items []workspace.Item) string {
		for _, it := range items {
			if it.Name == "work" {
				return it.Value
			}
		}
		if len(items) > 0 {
			return items[0].Value
		}
		return ""
	}
	return Values{
		First: str(c.DefaultFields.FirstName), Last: str(c.DefaultFields.LastName), Company: str(c.DefaultFields.Company),
		Email: item(c.DefaultFields.Emails), Phone: item(c.DefaultFields.PhoneNumbers),
	}
}

// Agree compares the table with the workspace and returns every
// disagreement: a (source, externalId) held by more than one contact, a
// live row without its contact or with other values, a contact of the
// source without a live row, a contact made in the app and never linked.
// Nothing returned means both sides agree.
func Agree(rows []Row, contacts []workspace.Contact) []string {
	var problems []string
	byExt := map[string][]workspace.Contact{}
	var unlinked []workspace.Contact
	for _, c := range contacts {
		if c.Source == nil || *c.Source != Source || c.ExternalID == nil {
			unlinked = append(unlinked, c)
			continue
		}
		byExt[*c.ExternalID] = append(byExt[*c.ExternalID], c)
	}
	live := map[string]bool{}
	for _, r := range rows {
		if r.Deleted {
			continue
		}
		ext := strconv.FormatInt(r.ID, 10)
		live[ext] = true
		cs := byExt[ext]
		switch {
		case len(cs) == 0:
			problems = append(problems, fmt.Sprintf("row %d %+v has no contact", r.ID, r.Values))
		case len(cs) > 1:
			problems = append(problems, fmt.Sprintf("row %d has %d contacts (duplicates)", r.ID, len(cs)))
		default:
			if got := ContactValues(cs[0]); got != r.Values {
				problems = append(problems, fmt.Sprintf("row %d holds %+v, its contact %s %+v", r.ID, r.Values, cs[0].ID, got))
			}
		}
	}
	exts := make([]string, 0, len(byExt))
	for ext := range byExt {
		exts = append(exts, ext)
	}
	sort.Strings(exts)
	for _, ext := range exts {
		if !live[ext] {
			for _, c := range byExt[ext] {
				problems = append(problems, fmt.Sprintf("contact %s (externalId %s) %+v has no live row", c.ID, ext, ContactValues(c)))
			}
		}
	}
	for _, c := range unlinked {
		problems = append(problems, fmt.Sprintf("contact %s %+v was never linked (source %v, externalId %v)", c.ID, ContactValues(c), deref(c.Source), deref(c.ExternalID)))
	}
	return problems
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}
