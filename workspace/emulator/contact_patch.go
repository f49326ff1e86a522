package emulator

import (
	"fmt"

	"github.com/syncd-io/syncd/workspace"
)

// applyPatch returns c changed by the validated partial update p, or the
// field errors that refuse it. Omitted fields are kept; null clears a
// field. Items follow workspace.ItemPatch: with an id the item of that id
// (unknown ids are refused), without one the first item of the same name,
// or a new item; a null value removes the addressed item. Custom fields
// are addressed by key (which must be defined) or by id; an empty value
// removes the field.
func (e *Emulator) applyPatch(c workspace.Contact, p *workspace.ContactPatch, app bool) (workspace.Contact, []workspace.FieldError) {
	var errs []workspace.FieldError
	c = cloneContact(c)
	optStr := func(o workspace.Opt[string], dst **string) {
		if !o.IsSet() {
			return
		}
		if v, ok := o.Get(); ok {
			*dst = &v
		} else {
			*dst = nil
		}
	}
	if v, ok := p.Source.Get(); ok && !app {
		if fe := reservedSource(v); fe != nil {
			errs = append(errs, *fe)
		}
	}
	optStr(p.ExternalID, &c.ExternalID)
	optStr(p.Source, &c.Source)
	optStr(p.SourceURL, &c.SourceURL)
	if df := p.DefaultFields; df != nil {
		d := &c.DefaultFields
		optStr(df.Company, &d.Company)
		optStr(df.FirstName, &d.FirstName)
		optStr(df.LastName, &d.LastName)
		optStr(df.Role, &d.Role)
		var ierrs []workspace.FieldError
		d.Emails, ierrs = e.patchItems(d.Emails, df.Emails, "/defaultFields/emails")
		errs = append(errs, ierrs...)
		d.PhoneNumbers, ierrs = e.patchItems(d.PhoneNumbers, df.PhoneNumbers, "/defaultFields/phoneNumbers")
		errs = append(errs, ierrs...)
	}
	defs := e.fieldDefs()
	for i, cf := range p.CustomFields {
		path := fmt.Sprintf("/customFields/%d", i)
		var d workspace.CustomFieldDefinition
		switch {
		case cf.Key == "" && cf.ID == "":
			errs = append(errs, workspace.FieldError{Path: path + "/key", Message: "Expected required property key or id",
				Schema: map[string]any{"type": "string", "minLength": 1}})
			continue
		case cf.Key != "":
			var ok bool
			if d, ok = defs[cf.Key]; !ok {
				errs = append(errs, e.unknownKey(path+"/key", cf.Key))
				continue
			}
		default:
			f, ok := fieldByID(c.CustomFields, cf.ID)
			if !ok {
				errs = append(errs, workspace.FieldError{Path: path + "/id", Message: "Expected the id of one of the contact's custom fields",
					Value: cf.ID, Schema: map[string]any{"type": "string"}})
				continue
			}
			d = defs[f.Key]
			if d.Key == "" { // definition gone: keep the field's own description
				d = workspace.CustomFieldDefinition{Key: f.Key, Name: f.Name, Type: f.Type}
			}
		}
		if cf.Key != "" && cf.ID != "" {
			if f, ok := fieldByID(c.CustomFields, cf.ID); !ok || f.Key != cf.Key {
				errs = append(errs, workspace.FieldError{Path: path + "/id", Message: "Expected the id of the contact's field with this key",
					Value: cf.ID, Schema: map[string]any{"type": "string"}})
				continue
			}
		}
		if fe := e.checkFieldValue(path+"/value", d.Type, cf.Value, app); fe != nil {
			errs = append(errs, *fe)
			continue
		}
		c.CustomFields = e.setCustomField(c.CustomFields, d, cf.ID, cf.Value)
	}
	return c, errs
}

func fieldByID(fields []workspace.CustomField, id string) (workspace.CustomField, bool) {
	for _, f := range fields {
		if f.ID == id {
			return f, true
		}
	}
	return workspace.CustomField{}, false
}

// patchItems applies item patches to items (a copy) at path.
func (e *Emulator) patchItems(items []workspace.Item, patches []workspace.ItemPatch, path string) ([]workspace.Item, []workspace.FieldError) {
	var errs []workspace.FieldError
	out := append([]workspace.Item{}, items...)
	for i, p := range patches {
		idx := -1
		for j, it := range out {
			if (p.ID != "" && it.ID == p.ID) || (p.ID == "" && it.Name == p.Name) {
				idx = j
				break
			}
		}
		if p.ID != "" && idx < 0 {
			errs = append(errs, workspace.FieldError{Path: fmt.Sprintf("%s/%d/id", path, i), Message: "Expected the id of one of the contact's items",
				Value: p.ID, Schema: map[string]any{"type": "string"}})
			continue
		}
		switch {
		case p.Value == nil && idx >= 0:
			out = append(out[:idx], out[idx+1:]...)
		case p.Value == nil:
			// Removing an item that is not there: nothing to do.
		case idx >= 0:
			out[idx].Value = *p.Value
			if p.Name != "" {
				out[idx].Name = p.Name
			}
		default:
			out = append(out, workspace.Item{ID: e.state.hexID("IT", 6), Name: p.Name, Value: *p.Value})
		}
	}
	return out, errs
}
