package pipedrive

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// fieldDef is one person field of GET /api/v2/personFields.
type fieldDef struct {
	Name    string `json:"field_name"`
	Code    string `json:"field_code"`
	Type    string `json:"field_type"`
	Custom  bool   `json:"is_custom_field"`
	Options []struct {
		ID    json.Number `json:"id"`
		Label string      `json:"label"`
	} `json:"options"`
}

// fieldDefs are the company's person fields, read once and kept for
// defsTTL: custom fields are keyed by 40-character hashes, and their
// types decide how a value is written (v2 does not coerce "42" to 42).
type fieldDefs struct {
	mu     sync.Mutex
	byCode map[string]fieldDef
	order  []string
	read   time.Time
}

const defsTTL = 10 * time.Minute

// load reads the definitions unless fresh ones are kept.
func (d *fieldDefs) load(ctx context.Context, c *client, now time.Time) error {
	d.mu.Lock()
	fresh := d.byCode != nil && now.Sub(d.read) < defsTTL
	d.mu.Unlock()
	if fresh {
		return nil
	}
	byCode := map[string]fieldDef{}
	var order []string
	cursor := ""
	for {
		q := url.Values{"limit": {strconv.Itoa(MaxPageSize)}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		var ans struct {
			Data           []fieldDef `json:"data"`
			AdditionalData struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"additional_data"`
		}
		if err := c.do(ctx, call{method: http.MethodGet, path: "/api/v2/personFields", query: q, route: "GET /api/v2/personFields", idempotent: true}, &ans); err != nil {
			return fmt.Errorf("list person fields: %w", err)
		}
		for _, f := range ans.Data {
			byCode[f.Code] = f
			order = append(order, f.Code)
		}
		if ans.AdditionalData.NextCursor == nil || *ans.AdditionalData.NextCursor == "" {
			break
		}
		cursor = *ans.AdditionalData.NextCursor
	}
	d.mu.Lock()
	d.byCode, d.order, d.read = byCode, order, now
	d.mu.Unlock()
	return nil
}

func (d *fieldDefs) get(code string) (fieldDef, bool) {
	if d == nil {
		return fieldDef{}, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.byCode[code]
	return f, ok
}

// custom returns the custom fields' codes and names, by code.
func (d *fieldDefs) custom() ([]string, map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := map[string]string{}
	var codes []string
	for _, c := range d.order {
		if f := d.byCode[c]; f.Custom {
			codes = append(codes, c)
			names[c] = f.Name
		}
	}
	sort.Strings(codes)
	return codes, names
}

func (f fieldDef) optionLabel(id string) (string, bool) {
	for _, o := range f.Options {
		if o.ID.String() == id {
			return o.Label, true
		}
	}
	return "", false
}

func (f fieldDef) optionID(label string) (int64, bool) {
	for _, o := range f.Options {
		if strings.EqualFold(o.Label, label) {
			n, err := o.ID.Int64()
			return n, err == nil
		}
	}
	return 0, false
}

// fromWire converts a custom field's value to a record value: option ids
// of enum and set fields become their labels, a monetary or address
// object its value, numbers int64 or float64.
func (d *fieldDefs) fromWire(code string, raw json.RawMessage) any {
	f, _ := d.get(code)
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		out := make([]string, 0, len(list))
		for _, r := range list {
			if v := d.fromWire(code, r); v != nil {
				out = append(out, fmt.Sprint(v))
			}
		}
		return out
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) == nil {
		if v, ok := obj["value"]; ok {
			return scalar(v)
		}
		if v, ok := obj["label"]; ok {
			return scalar(v)
		}
		return string(raw)
	}
	v := scalar(raw)
	if f.Type == "enum" || f.Type == "set" {
		if label, ok := f.optionLabel(fmt.Sprint(v)); ok {
			return label
		}
	}
	return v
}

// toWire converts a record value to what v2 takes for the field's type.
// currency is the code a monetary amount is written in ("" when none is
// known: the value is refused).
func (d *fieldDefs) toWire(field, code string, v any, currency string) (any, error) {
	f, ok := d.get(code)
	if !ok || !f.Custom {
		return nil, refuse(field, "Pipedrive has no person custom field with this key (see syncd validate for the keys)")
	}
	if v == nil || v == "" {
		return nil, nil // null clears, also for set fields ([] is refused)
	}
	s := strings.TrimSpace(fmt.Sprint(v))
	switch f.Type {
	case "monetary":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, refuse(field, fmt.Sprintf("%q is not an amount (a monetary field)", s))
		}
		if currency == "" {
			return nil, refuse(field, fmt.Sprintf("%s is a monetary field and the person has no currency for it: set the connector's currency setting (e.g. currency: EUR)", f.Name))
		}
		return money{Value: n, Currency: currency}, nil
	case "double":
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, refuse(field, fmt.Sprintf("%q is not a number (a %s field)", s, f.Type))
		}
		return n, nil
	case "int":
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, refuse(field, fmt.Sprintf("%q is not an integer", s))
		}
		return n, nil
	case "enum":
		n, ok := f.optionID(s)
		if !ok {
			return nil, refuse(field, fmt.Sprintf("%q is not an option of %s", s, f.Name))
		}
		return n, nil
	case "set":
		return d.setIDs(field, f, v)
	}
	return s, nil
}

func (d *fieldDefs) setIDs(field string, f fieldDef, v any) (any, error) {
	labels, ok := v.([]string)
	if !ok {
		labels = strings.Split(fmt.Sprint(v), ",")
	}
	var ids []int64
	for _, l := range labels {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		n, ok := f.optionID(l)
		if !ok {
			return nil, refuse(field, fmt.Sprintf("%q is not an option of %s", l, f.Name))
		}
		ids = append(ids, n)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return ids, nil
}

// money is a monetary custom field's value in API v2: the amount and its
// currency, {"value": 2300, "currency": "EUR"}. Records carry the amount;
// the currency is kept on write.
type money struct {
	Value    float64 `json:"value"`
	Currency string  `json:"currency"`
}

// currencyOf returns the currency of a monetary value as Pipedrive
// answered it, "" when it has none.
func currencyOf(raw json.RawMessage) string {
	var m struct {
		Currency *string `json:"currency"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Currency == nil {
		return ""
	}
	return strings.TrimSpace(*m.Currency)
}
