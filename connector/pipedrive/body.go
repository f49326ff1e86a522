package pipedrive

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// readOnly are the record fields Pipedrive sets itself.
var readOnly = map[string]bool{fieldID: true, fieldAddTime: true, fieldUpdateTime: true}

func text(v any) string {
	if v == nil {
		return ""
	}
	if l, ok := v.([]string); ok {
		return strings.Join(l, ", ")
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// body builds the JSON body of a create (cur nil) or an update of cur
// from a change's fields. An update's body holds only what differs; each
// labelled list is sent whole, with the items syncd does not map kept.
func (s *Source) body(ctx context.Context, fields map[string]any, cur *person) (map[string]any, error) {
	b := map[string]any{}
	if err := s.nameInto(b, fields, cur); err != nil {
		return nil, err
	}
	custom := map[string]any{}
	lists := map[string][]string{}
	for f, v := range fields {
		switch {
		case f == fieldName || f == fieldFirstName || f == fieldLastName:
		case readOnly[f]:
			return nil, refuse(f, "is set by Pipedrive and cannot be written; map it with direction: to-workspace")
		case f == fieldOrgID || f == fieldOwnerID:
			if err := idInto(b, f, v); err != nil {
				return nil, err
			}
		case f == fieldOrgName:
			id, err := s.orgID(ctx, text(v))
			if err != nil {
				return nil, err
			}
			b[fieldOrgID] = id
		case strings.HasPrefix(f, customPrefix):
			key := strings.TrimPrefix(f, customPrefix)
			w, err := s.defs.toWire(f, key, v, s.currencyFor(key, cur))
			if err != nil {
				return nil, err
			}
			custom[key] = w
		default:
			if err := checkField(f); err != nil {
				return nil, refuse(f, err.Error())
			}
			list, label, _ := strings.Cut(f, ".")
			lists[list] = append(lists[list], label)
		}
	}
	if len(custom) > 0 {
		b["custom_fields"] = custom
	}
	for list, labels := range lists {
		var items []item
		if cur != nil {
			items = slices.Clone(cur.Emails)
			if list == listPhones {
				items = slices.Clone(cur.Phones)
			}
		}
		out := setItems(slices.Clone(items), labels, func(label string) string { return text(fields[list+"."+label]) })
		if cur == nil || !slices.Equal(out, items) {
			b[list] = nonNil(out)
		}
	}
	if cur != nil {
		dropUnchanged(b, cur)
	}
	return b, nil
}

func nonNil(items []item) []item {
	if items == nil {
		return []item{}
	}
	return items
}

// nameInto sets name from name, or from first_name and last_name (v2
// writes only name; Pipedrive derives the two from it), keeping the
// current part that the change does not name.
func (s *Source) nameInto(b map[string]any, fields map[string]any, cur *person) error {
	_, hasName := fields[fieldName]
	_, hasFirst := fields[fieldFirstName]
	_, hasLast := fields[fieldLastName]
	if !hasName && !hasFirst && !hasLast {
		if cur == nil {
			return refuse(fieldName, "Pipedrive requires a name: map name, or first_name and last_name")
		}
		return nil
	}
	name := text(fields[fieldName])
	if !hasName {
		first, last := "", ""
		if cur != nil {
			first, last = text(strOrNil(cur.FirstName)), text(strOrNil(cur.LastName))
		}
		if hasFirst {
			first = text(fields[fieldFirstName])
		}
		if hasLast {
			last = text(fields[fieldLastName])
		}
		name = strings.TrimSpace(first + " " + last)
	}
	if name == "" {
		return refuse(fieldName, "Pipedrive requires a name and cannot clear it")
	}
	b[fieldName] = name
	return nil
}

// idInto sets an id field (org_id, owner_id): v2 takes integers, null to
// clear org_id.
func idInto(b map[string]any, f string, v any) error {
	s := text(v)
	if s == "" {
		if f == fieldOwnerID {
			return refuse(f, "a person always has an owner; it cannot be cleared")
		}
		b[f] = nil
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return refuse(f, fmt.Sprintf("%q is not an id", s))
	}
	b[f] = n
	return nil
}

// setItems applies the values of labels to a labelled list: an item with
// the label gets the value (the primary item for "primary"), a new one is
// added when there is none, an empty value removes the item. Items of
// other labels stay as they are. "primary" is applied last.
func setItems(items []item, labels []string, value func(label string) string) []item {
	sort.Slice(labels, func(i, j int) bool {
		if (labels[i] == primaryLabel) != (labels[j] == primaryLabel) {
			return labels[j] == primaryLabel
		}
		return labels[i] < labels[j]
	})
	for _, label := range labels {
		items = setItem(items, label, value(label))
	}
	return items
}

func setItem(items []item, label, val string) []item {
	idx := -1
	for i, it := range items {
		if (label == primaryLabel && it.Primary) || (label != primaryLabel && it.Label == label) {
			idx = i
			break
		}
	}
	if label == primaryLabel && idx < 0 && len(items) > 0 {
		idx = 0
	}
	switch {
	case val == "" && idx >= 0:
		wasPrimary := items[idx].Primary
		items = slices.Delete(items, idx, idx+1)
		if wasPrimary && len(items) > 0 {
			items[0].Primary = true
		}
	case val == "":
	case idx >= 0:
		items[idx].Value = val
	default:
		newLabel := label
		if label == primaryLabel {
			newLabel = "work"
		}
		items = append(items, item{Value: val, Label: newLabel, Primary: len(items) == 0})
	}
	return items
}

// dropUnchanged removes from an update's body what the person already
// holds, so that a repeated update sends nothing.
func dropUnchanged(b map[string]any, cur *person) {
	if n, ok := b[fieldName]; ok && n == cur.Name {
		delete(b, fieldName)
	}
	for _, f := range []string{fieldOrgID, fieldOwnerID} {
		v, ok := b[f]
		if !ok {
			continue
		}
		have := cur.OrgID
		if f == fieldOwnerID {
			have = cur.OwnerID
		}
		if (v == nil && have == nil) || (have != nil && v == *have) {
			delete(b, f)
		}
	}
	if c, ok := b["custom_fields"].(map[string]any); ok {
		for k, v := range c {
			if raw, has := cur.CustomFields[k]; has && sameJSON(raw, jsonText(v)) {
				delete(c, k)
			}
		}
		if len(c) == 0 {
			delete(b, "custom_fields")
		}
	}
}

// orgID returns the id of the organization named name, creating it when
// there is none; nil for an empty name.
func (s *Source) orgID(ctx context.Context, name string) (any, error) {
	if name == "" {
		return nil, nil
	}
	var ans struct {
		Data struct {
			Items []struct {
				Item struct {
					ID   int64  `json:"id"`
					Name string `json:"name"`
				} `json:"item"`
			} `json:"items"`
		} `json:"data"`
	}
	q := url.Values{"term": {name}, "fields": {"name"}, "exact_match": {"true"}, "limit": {"10"}}
	if err := s.c.do(ctx, call{method: http.MethodGet, path: "/api/v2/organizations/search", query: q, route: "GET /api/v2/organizations/search", idempotent: true}, &ans); err != nil {
		return nil, fmt.Errorf("find organization: %w", refusalOf(fieldOrgName, err))
	}
	for _, it := range ans.Data.Items {
		if strings.EqualFold(it.Item.Name, name) {
			return it.Item.ID, nil
		}
	}
	var made struct {
		Data struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	if err := s.c.do(ctx, call{method: http.MethodPost, path: "/api/v2/organizations", body: map[string]any{"name": name}, route: "POST /api/v2/organizations"}, &made); err != nil {
		return nil, fmt.Errorf("create organization: %w", refusalOf(fieldOrgName, err))
	}
	s.orgMu.Lock()
	s.orgs[made.Data.ID] = name
	s.orgMu.Unlock()
	return made.Data.ID, nil
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// sameJSON reports whether two JSON texts hold the same value, whatever
// the order of their keys.
func sameJSON(a json.RawMessage, b string) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// currencyFor is the currency a monetary field's amount is written in:
// the person's own for the field when it has one (so that an amount
// mapped from the workspace never changes it), else the connector's
// currency setting.
func (s *Source) currencyFor(key string, cur *person) string {
	if cur != nil {
		if c := currencyOf(cur.CustomFields[key]); c != "" {
			return c
		}
	}
	return s.currency
}
