package emulator

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// PhonePattern is the E.164 format phone numbers must have.
const PhonePattern = `^\+[1-9]\d{1,14}$`

// DefaultSource is the source of a contact created through the API
// without one. Contacts created in the app have none (null).
const DefaultSource = "public-api"

// ReservedSources may not be a contact's source (compared without regard
// to case): the spec's reserved words, the service's own name, and the
// integrations the facts note names.
var ReservedSources = []string{"device", "csv", "other", ServiceName, "zapier", "google-people"}

// ReservedSourcePrefixes may not start a contact's source.
var ReservedSourcePrefixes = []string{ServiceName, "csv"}

// Custom field types of the facts note.
const (
	FieldAddress     = workspace.FieldAddress
	FieldBoolean     = workspace.FieldBoolean
	FieldDate        = workspace.FieldDate
	FieldMultiSelect = workspace.FieldMultiSelect
	FieldNumber      = workspace.FieldNumber
	FieldString      = workspace.FieldString
	FieldURL         = workspace.FieldURL
)

// FieldTypes lists the custom field types.
var FieldTypes = workspace.FieldTypes

// ValidFieldType reports whether t is one of FieldTypes.
func ValidFieldType(t string) bool { return workspace.ValidFieldType(t) }

// Request schemas of the contact operations.
var (
	emailValue = str(1, 0).withFormat("email")
	phoneValue = str(1, 0).withPattern(PhonePattern)

	itemCreate = func(value *node) *node {
		return object(map[string]*node{"name": str(0, 0), "value": value}, "value")
	}
	itemPatch = func(value *node) *node {
		return object(map[string]*node{"id": str(1, 0), "name": str(0, 0), "value": value.orNull()}, "value")
	}

	contactCreateSchema = object(map[string]*node{
		"defaultFields": object(map[string]*node{
			"company":      str(0, 0).orNull(),
			"firstName":    str(1, 0),
			"lastName":     str(0, 0).orNull(),
			"role":         str(0, 0).orNull(),
			"emails":       array(itemCreate(emailValue), 0, 0).orNull(),
			"phoneNumbers": array(itemCreate(phoneValue), 0, 0).orNull(),
		}, "firstName"),
		"customFields": array(object(map[string]*node{
			"key":   str(1, 0),
			"value": fieldValue,
		}, "key", "value"), 0, 0).orNull(),
		"createdByUserId": str(1, 0),
		"source":          str(1, workspace.MaxSourceLenCreate),
		"sourceUrl":       str(1, workspace.MaxSourceURLLen).withFormat("uri"),
		"externalId":      str(1, workspace.MaxExternalIDLen).orNull(),
	}, "defaultFields")

	contactPatchSchema = object(map[string]*node{
		"defaultFields": object(map[string]*node{
			"company":      str(0, 0).orNull(),
			"firstName":    str(1, 0),
			"lastName":     str(0, 0).orNull(),
			"role":         str(0, 0).orNull(),
			"emails":       array(itemPatch(emailValue), 0, 0),
			"phoneNumbers": array(itemPatch(phoneValue), 0, 0),
		}),
		"customFields": array(object(map[string]*node{
			"id":    str(1, 0),
			"key":   str(1, 0),
			"value": fieldValue,
		}, "value"), 0, 0),
		"source":     str(1, workspace.MaxSourceLenUpdate).orNull(),
		"sourceUrl":  str(1, workspace.MaxSourceURLLen).withFormat("uri").orNull(),
		"externalId": str(1, workspace.MaxExternalIDLen).orNull(),
	})
)

// contactCreateIn is a validated create body; nil pointers were absent or
// null.
type contactCreateIn struct {
	DefaultFields struct {
		Company      *string          `json:"company"`
		FirstName    *string          `json:"firstName"`
		LastName     *string          `json:"lastName"`
		Role         *string          `json:"role"`
		Emails       []workspace.Item `json:"emails"`
		PhoneNumbers []workspace.Item `json:"phoneNumbers"`
	} `json:"defaultFields"`
	CustomFields    []workspace.CustomFieldValue `json:"customFields"`
	CreatedByUserID *string                      `json:"createdByUserId"`
	Source          *string                      `json:"source"`
	SourceURL       *string                      `json:"sourceUrl"`
	ExternalID      *string                      `json:"externalId"`
}

// reservedSource returns the field error of a reserved source, or nil.
func reservedSource(s string) *workspace.FieldError {
	l := strings.ToLower(s)
	for _, r := range ReservedSources {
		if l == r {
			return &workspace.FieldError{Path: "/source", Message: fmt.Sprintf("Expected source not to be the reserved value '%s'", r),
				Value: s, Schema: map[string]any{"type": "string", "not": map[string]any{"enum": ReservedSources}}}
		}
	}
	for _, p := range ReservedSourcePrefixes {
		if strings.HasPrefix(l, p) {
			return &workspace.FieldError{Path: "/source", Message: fmt.Sprintf("Expected source not to start with '%s'", p),
				Value: s, Schema: map[string]any{"type": "string", "not": map[string]any{"pattern": "^(" + strings.Join(ReservedSourcePrefixes, "|") + ")"}}}
		}
	}
	return nil
}

// fieldDefs returns the custom field definitions by key.
func (e *Emulator) fieldDefs() map[string]workspace.CustomFieldDefinition {
	m := make(map[string]workspace.CustomFieldDefinition, len(e.opts.CustomFields))
	for _, d := range e.opts.CustomFields {
		m[d.Key] = d
	}
	return m
}

func (e *Emulator) definedKeys() []string {
	keys := make([]string, 0, len(e.opts.CustomFields))
	for _, d := range e.opts.CustomFields {
		keys = append(keys, d.Key)
	}
	return keys
}

// unknownKey is the field error of a custom field key with no definition.
func (e *Emulator) unknownKey(path, key string) workspace.FieldError {
	return workspace.FieldError{Path: path, Message: "Expected the key of a defined custom field", Value: key,
		Schema: map[string]any{"type": "string", "enum": e.definedKeys()}}
}

var isoDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// checkFieldValue validates the value of a custom field of type typ. Its
// form first: in the typed form (ValuesTyped) the JSON kind the field's
// type takes, or null; in the arrays form an array of strings. The app
// (app true) may use either. Then its text: one value at most for every
// type but multi-select, and the value's form for boolean, number, date
// and url. Empty clears the field.
func (e *Emulator) checkFieldValue(path, typ string, v workspace.FieldValue, app bool) *workspace.FieldError {
	value := v.Text()
	if !app {
		if fe := checkValueForm(path, typ, v, e.opts.CustomFieldValues); fe != nil {
			return fe
		}
	}
	bad := func(msg string) *workspace.FieldError {
		return &workspace.FieldError{Path: path, Message: msg, Value: v, Schema: valueSchema(typ, e.opts.CustomFieldValues)}
	}
	if typ == FieldMultiSelect || len(value) == 0 {
		return nil
	}
	if len(value) > 1 {
		return bad(fmt.Sprintf("Expected at most one value for a %s field", typ))
	}
	s := value[0]
	switch typ {
	case FieldBoolean:
		if s != "true" && s != "false" {
			return bad("Expected 'true' or 'false' for a boolean field")
		}
	case FieldNumber:
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return bad("Expected a number for a number field")
		}
	case FieldDate:
		if _, err := time.Parse(time.RFC3339, s); err != nil && !isoDate.MatchString(s) {
			return bad("Expected an ISO 8601 date or date-time for a date field")
		}
	case FieldURL:
		if !isAbsoluteURI(s) {
			return bad("Expected an absolute URI for a url field")
		}
	}
	return nil
}

// checkValueForm refuses a value whose JSON kind the form does not take
// for a field of type typ.
func checkValueForm(path, typ string, v workspace.FieldValue, form string) *workspace.FieldError {
	sch := valueSchema(typ, form)
	if form == workspace.ValuesArrays {
		if v.Kind() != "array" {
			return &workspace.FieldError{Path: path, Message: "Expected array", Value: v, Schema: sch}
		}
		return nil
	}
	if !workspace.FitsType(typ, v) {
		msg := fmt.Sprintf("Expected %s for a %s field", sch["type"], typ)
		if typ == FieldDate {
			msg = "Expected a date-time string for a date field"
		}
		return &workspace.FieldError{Path: path, Message: msg, Value: v, Schema: sch}
	}
	return nil
}

// valueSchema describes the value a field of type typ takes in form, as
// the published document's schema does.
func valueSchema(typ, form string) map[string]any {
	if form == workspace.ValuesArrays || typ == FieldMultiSelect {
		return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "nullable": form != workspace.ValuesArrays, "x-field-type": typ}
	}
	m := map[string]any{"type": "string", "nullable": true, "x-field-type": typ}
	switch typ {
	case FieldBoolean:
		m["type"] = "boolean"
	case FieldNumber:
		m["type"] = "number"
	case FieldDate:
		m["format"] = "date-time"
	}
	return m
}

// checkCreate applies the rules beyond the schema to a create body.
func (e *Emulator) checkCreate(in *contactCreateIn, app bool) []workspace.FieldError {
	var errs []workspace.FieldError
	if in.Source != nil && !app {
		if fe := reservedSource(*in.Source); fe != nil {
			errs = append(errs, *fe)
		}
	}
	defs := e.fieldDefs()
	for i, cf := range in.CustomFields {
		d, ok := defs[cf.Key]
		if !ok {
			errs = append(errs, e.unknownKey(fmt.Sprintf("/customFields/%d/key", i), cf.Key))
			continue
		}
		if fe := e.checkFieldValue(fmt.Sprintf("/customFields/%d/value", i), d.Type, cf.Value, app); fe != nil {
			errs = append(errs, *fe)
		}
	}
	return errs
}

// buildContact makes the contact of a validated create body.
func (e *Emulator) buildContact(in *contactCreateIn, app bool, now time.Time) workspace.Contact {
	s := e.state
	c := workspace.Contact{
		ID:         s.hexID("", 12),
		ExternalID: in.ExternalID,
		Source:     in.Source,
		SourceURL:  in.SourceURL,
		CreatedAt:  now,
		UpdatedAt:  now,
	}
	if c.Source == nil && !app {
		src := DefaultSource
		c.Source = &src
	}
	c.CreatedByUserID = apiUserID
	if app {
		c.CreatedByUserID = appUserID
	}
	if in.CreatedByUserID != nil {
		c.CreatedByUserID = *in.CreatedByUserID
	}
	df := in.DefaultFields
	c.DefaultFields = workspace.DefaultFields{Company: df.Company, FirstName: df.FirstName, LastName: df.LastName, Role: df.Role}
	c.DefaultFields.Emails = e.newItems(df.Emails)
	c.DefaultFields.PhoneNumbers = e.newItems(df.PhoneNumbers)
	defs := e.fieldDefs()
	c.CustomFields = []workspace.CustomField{}
	for _, cf := range in.CustomFields {
		c.CustomFields = e.setCustomField(c.CustomFields, defs[cf.Key], "", cf.Value)
	}
	return c
}

// Users the emulator attributes contacts to.
const (
	apiUserID = "USapi0000001"
	appUserID = "USapp0000001"
)

func (e *Emulator) newItems(in []workspace.Item) []workspace.Item {
	out := make([]workspace.Item, 0, len(in))
	for _, it := range in {
		out = append(out, workspace.Item{ID: e.state.hexID("IT", 6), Name: it.Name, Value: it.Value})
	}
	return out
}

// setCustomField sets (or, with an empty value, removes) the field of
// definition d in fields; id, when given, is the existing field's id. The
// value is kept in the emulator's form, whichever form it came in.
func (e *Emulator) setCustomField(fields []workspace.CustomField, d workspace.CustomFieldDefinition, id string, value workspace.FieldValue) []workspace.CustomField {
	v, err := workspace.EncodeValue(d.Type, e.opts.CustomFieldValues, value.Text())
	if err != nil { // checked before: only the app's odd values land here
		v = workspace.ListValue(value.Text())
	}
	for i, f := range fields {
		if f.Key == d.Key || (id != "" && f.ID == id) {
			if v.IsEmpty() {
				return append(fields[:i:i], fields[i+1:]...)
			}
			fields[i].Value = v
			return fields
		}
	}
	if v.IsEmpty() {
		return fields
	}
	return append(fields, workspace.CustomField{ID: e.state.hexID("CF", 6), Key: d.Key, Name: d.Name, Type: d.Type, Value: v})
}
