package pipedrive

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// Record fields that are not labelled lists or custom fields.
const (
	fieldID         = "id"
	fieldName       = "name"
	fieldFirstName  = "first_name"
	fieldLastName   = "last_name"
	fieldOrgID      = "org_id"
	fieldOrgName    = "org_name"
	fieldOwnerID    = "owner_id"
	fieldAddTime    = "add_time"
	fieldUpdateTime = "update_time"
	listEmails      = "emails"
	listPhones      = "phones"
	customPrefix    = "custom_fields."
	primaryLabel    = "primary"
)

// standardFields are the record fields every person has.
var standardFields = []string{fieldID, fieldName, fieldFirstName, fieldLastName, fieldOrgID, fieldOrgName, fieldOwnerID, fieldAddTime, fieldUpdateTime}

// listLabels are the labels Pipedrive gives e-mail addresses and phone
// numbers; "<list>.primary" addresses the primary item whatever its label.
var listLabels = map[string][]string{
	listEmails: {"work", "home", "other"},
	listPhones: {"work", "home", "mobile", "other"},
}

// listFields are the record fields of the labelled lists.
func listFields() []string { return slices.Clone(allListFields) }

var allListFields = func() []string {
	var out []string
	for _, list := range []string{listEmails, listPhones} {
		out = append(out, list+"."+primaryLabel)
		for _, l := range listLabels[list] {
			out = append(out, list+"."+l)
		}
	}
	return out
}()

// item is one entry of a labelled list.
type item struct {
	Value   string `json:"value"`
	Primary bool   `json:"primary"`
	Label   string `json:"label"`
}

// person is a person as API v2 answers it.
type person struct {
	ID           int64                      `json:"id"`
	Name         string                     `json:"name"`
	FirstName    *string                    `json:"first_name"`
	LastName     *string                    `json:"last_name"`
	OwnerID      *int64                     `json:"owner_id"`
	OrgID        *int64                     `json:"org_id"`
	AddTime      string                     `json:"add_time"`
	UpdateTime   string                     `json:"update_time"`
	Emails       []item                     `json:"emails"`
	Phones       []item                     `json:"phones"`
	IsDeleted    bool                       `json:"is_deleted"`
	CustomFields map[string]json.RawMessage `json:"custom_fields"`
}

// listValue is the value of "<list>.<label>": the first item with the
// label ("primary": the primary item), nil when there is none.
func listValue(items []item, label string) any {
	for _, it := range items {
		if (label == primaryLabel && it.Primary) || (label != primaryLabel && it.Label == label) {
			return it.Value
		}
	}
	if label == primaryLabel && len(items) > 0 {
		return items[0].Value
	}
	return nil
}

func idString(p *int64) any {
	if p == nil || *p == 0 {
		return nil
	}
	return strconv.FormatInt(*p, 10)
}

func strOrNil(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

// record converts a person, filling the fields of s.want (nil: all).
func (s *Source) record(p person, defs *fieldDefs, orgs map[int64]string) connector.Record {
	r := connector.Record{ID: strconv.FormatInt(p.ID, 10), Deleted: p.IsDeleted}
	r.UpdatedAt, _ = parseTime(p.UpdateTime)
	want := s.want
	if want == nil {
		want = append(slices.Clone(standardFields), allListFields...)
		for k := range p.CustomFields {
			want = append(want, customPrefix+k)
		}
	}
	r.Fields = make(map[string]any, len(want))
	for _, f := range want {
		r.Fields[f] = fieldValue(&p, f, r.ID, defs, orgs)
	}
	return r
}

// fieldValue is one record field of a person.
func fieldValue(p *person, f, id string, defs *fieldDefs, orgs map[int64]string) any {
	switch f {
	case fieldID:
		return id
	case fieldName:
		return p.Name
	case fieldFirstName:
		return strOrNil(p.FirstName)
	case fieldLastName:
		return strOrNil(p.LastName)
	case fieldOrgID:
		return idString(p.OrgID)
	case fieldOwnerID:
		return idString(p.OwnerID)
	case fieldAddTime:
		return p.AddTime
	case fieldUpdateTime:
		return p.UpdateTime
	case fieldOrgName:
		if p.OrgID != nil {
			if n, ok := orgs[*p.OrgID]; ok {
				return n
			}
		}
		return nil
	}
	if key, ok := strings.CutPrefix(f, customPrefix); ok {
		raw, has := p.CustomFields[key]
		if !has {
			return nil
		}
		return defs.fromWire(key, raw)
	}
	list, label, _ := strings.Cut(f, ".")
	if list == listPhones {
		return listValue(p.Phones, label)
	}
	return listValue(p.Emails, label)
}

// parseTime reads v2's RFC 3339 times and v1's "YYYY-MM-DD HH:MM:SS"
// (UTC).
func parseTime(v string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), true
	}
	if t, err := time.Parse(time.DateTime, v); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// scalar converts a JSON scalar: a string, an integer (int64), another
// number (float64), a boolean; nil for null or anything else.
func scalar(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return nil
	}
	switch t := v.(type) {
	case string, bool:
		return t
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n
		}
		f, _ := t.Float64()
		return f
	}
	return nil
}
