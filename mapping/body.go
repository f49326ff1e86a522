package mapping

import (
	"sort"
	"strings"

	"github.com/syncd-io/syncd/workspace"
)

// CreateBody is the body that creates the contact of a mapped record, with
// the connector's source.
func CreateBody(source string, m Mapped) workspace.ContactCreate {
	c := workspace.ContactCreate{Source: source, SourceURL: m.SourceURL, ExternalID: m.ExternalID}
	for _, k := range m.Fields.keys() {
		t, err := parseTarget(k)
		if err != nil {
			continue
		}
		v := m.Fields[k]
		switch t.kind {
		case kindName:
			switch t.label {
			case "firstName":
				c.DefaultFields.FirstName = v
			case "lastName":
				c.DefaultFields.LastName = v
			case "company":
				c.DefaultFields.Company = v
			case "role":
				c.DefaultFields.Role = v
			}
		case kindEmail:
			c.DefaultFields.Emails = append(c.DefaultFields.Emails, workspace.Item{Name: t.label, Value: v})
		case kindPhone:
			c.DefaultFields.PhoneNumbers = append(c.DefaultFields.PhoneNumbers, workspace.Item{Name: t.label, Value: v})
		case kindCustom:
			c.CustomFields = append(c.CustomFields, workspace.CustomFieldValue{Key: t.label, Value: workspace.ListValue(splitMulti(v))})
		}
	}
	return c
}

// PatchBody is the partial update that turns a contact holding old into
// one holding new: only the changed targets. A removed simple field is
// cleared with null; a removed e-mail or phone item is removed (value
// null), addressed by its item id when itemIDs (from ItemIDs) knows it,
// else by its label; a removed custom field is cleared (NullValue). Custom
// field values are their text: the workspace client sends them in the form
// of each field's type.
func PatchBody(old, new Fields, itemIDs map[string]string) workspace.ContactPatch {
	set, removed := Diff(old, new)
	var p workspace.ContactPatch
	df := &workspace.DefaultFieldsPatch{}
	keys := make([]string, 0, len(set)+len(removed))
	for k := range set {
		keys = append(keys, k)
	}
	keys = append(keys, removed...)
	sort.Strings(keys)
	for _, k := range keys {
		t, err := parseTarget(k)
		if err != nil {
			continue
		}
		v, isSet := set[k]
		switch t.kind {
		case kindName:
			o := workspace.Null[string]()
			if isSet {
				o = workspace.Some(v)
			}
			switch t.label {
			case "firstName":
				df.FirstName = o
			case "lastName":
				df.LastName = o
			case "company":
				df.Company = o
			case "role":
				df.Role = o
			}
		case kindEmail, kindPhone:
			ip := workspace.ItemPatch{ID: itemIDs[k], Name: t.label}
			if isSet {
				ip.Value = &v
			}
			if t.kind == kindEmail {
				df.Emails = append(df.Emails, ip)
			} else {
				df.PhoneNumbers = append(df.PhoneNumbers, ip)
			}
		case kindCustom:
			val := workspace.NullValue()
			if isSet {
				val = workspace.ListValue(splitMulti(v))
			}
			p.CustomFields = append(p.CustomFields, workspace.CustomFieldValue{Key: t.label, Value: val})
		}
	}
	if !df.IsEmpty() {
		p.DefaultFields = df
	}
	return p
}

// ItemIDs returns the ids of a contact's e-mail and phone items by target
// ("emails.work" -> id), the first item of each label, for PatchBody.
func ItemIDs(c workspace.Contact) map[string]string {
	out := map[string]string{}
	seen := map[string]bool{}
	add := func(prefix string, items []workspace.Item) {
		for _, it := range items {
			k := prefix + it.Name
			if !seen[k] && it.ID != "" && strings.TrimSpace(it.Name) != "" {
				out[k] = it.ID
			}
			seen[k] = true
		}
	}
	add("emails.", c.DefaultFields.Emails)
	add("phoneNumbers.", c.DefaultFields.PhoneNumbers)
	return out
}
