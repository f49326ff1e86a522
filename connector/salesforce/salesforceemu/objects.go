package salesforceemu

import (
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// fieldDef is one field of an object's describe.
type fieldDef struct {
	Name       string
	Type       string // id, string, email, phone, boolean, datetime, reference, textarea, picklist
	Length     int
	Createable bool
	Updateable bool
	Nillable   bool
	Defaulted  bool // defaultedOnCreate
	Default    string
	// Values are a picklist's values; Restricted refuses any other.
	Values     []string
	Restricted bool
	// RefersTo names the objects a reference field may point to; when
	// set, a write checks the record exists.
	RefersTo []string
}

// required reports whether a create must give the field: Salesforce's
// describe marks it createable, not nillable and not defaulted on create.
func (f fieldDef) required() bool { return f.Createable && !f.Nillable && !f.Defaulted }

func rw(name, typ string, n int) fieldDef {
	return fieldDef{Name: name, Type: typ, Length: n, Createable: true, Updateable: true, Nillable: true}
}

func ro(name, typ string) fieldDef { return fieldDef{Name: name, Type: typ, Nillable: true} }

var systemFields = []fieldDef{
	{Name: "Id", Type: "id", Length: 18, Defaulted: true},
	{Name: "IsDeleted", Type: "boolean", Defaulted: true},
	ro("MasterRecordId", "reference"),
	{Name: "OwnerId", Type: "reference", Length: 18, Createable: true, Updateable: true, Defaulted: true},
	{Name: "CreatedDate", Type: "datetime", Defaulted: true},
	{Name: "LastModifiedDate", Type: "datetime", Defaulted: true},
	{Name: "SystemModstamp", Type: "datetime", Defaulted: true},
}

var contactFields = append(append([]fieldDef{}, systemFields...),
	rw("AccountId", "reference", 18),
	fieldDef{Name: "LastName", Type: "string", Length: 80, Createable: true, Updateable: true},
	rw("FirstName", "string", 40),
	rw("Salutation", "picklist", 40),
	fieldDef{Name: "Name", Type: "string", Length: 121},
	rw("Email", "email", 80),
	rw("Phone", "phone", 40),
	rw("MobilePhone", "phone", 40),
	rw("HomePhone", "phone", 40),
	rw("Title", "string", 128),
	rw("Department", "string", 80),
	rw("MailingCity", "string", 40),
	rw("MailingCountry", "string", 80),
	rw("Description", "textarea", 32000),
)

var leadFields = append(append([]fieldDef{}, systemFields...),
	fieldDef{Name: "LastName", Type: "string", Length: 80, Createable: true, Updateable: true},
	rw("FirstName", "string", 40),
	fieldDef{Name: "Name", Type: "string", Length: 121},
	fieldDef{Name: "Company", Type: "string", Length: 255, Createable: true, Updateable: true},
	fieldDef{Name: "Status", Type: "picklist", Length: 255, Createable: true, Updateable: true, Defaulted: true, Default: "Open - Not Contacted"},
	rw("Email", "email", 80),
	rw("Phone", "phone", 40),
	rw("MobilePhone", "phone", 40),
	rw("Title", "string", 128),
	rw("Description", "textarea", 32000),
)

// object is one sObject type with its records.
type object struct {
	name    string
	prefix  string
	fields  map[string]fieldDef // by lower-case name
	order   []string            // lower-case names in describe order
	records map[string]*record  // by 15-character id
	// deleteLog holds deletions for getDeleted; earliest is the time of
	// the newest entry purged from it.
	deleteLog []deletion
	earliest  time.Time
}

type deletion struct {
	id string
	at time.Time
}

// record is one row. values are by lower-case field name and hold
// string or nil; the system fields are kept beside them.
type record struct {
	id       string // 18 characters
	values   map[string]any
	created  time.Time
	modified time.Time
	modstamp time.Time
	deleted  bool
	deleteAt time.Time
	master   string
	purged   bool
}

func newObject(name, prefix string, defs []fieldDef, custom []string) *object {
	o := &object{name: name, prefix: prefix, fields: map[string]fieldDef{}, records: map[string]*record{}}
	for _, f := range defs {
		o.add(f)
	}
	for _, c := range custom {
		o.add(rw(c, "string", 255))
	}
	return o
}

func (o *object) add(f fieldDef) {
	k := strings.ToLower(f.Name)
	o.fields[k] = f
	o.order = append(o.order, k)
}

// value returns a record's value of a field, system fields included.
func (r *record) value(field string) any {
	switch field {
	case "id":
		return r.id
	case "isdeleted":
		return r.deleted
	case "masterrecordid":
		if r.master == "" {
			return nil
		}
		return r.master
	case "createddate":
		return r.created
	case "lastmodifieddate":
		return r.modified
	case "systemmodstamp":
		return r.modstamp
	case "name":
		return fullName(r.values["firstname"], r.values["lastname"])
	case "ownerid":
		if v, ok := r.values["ownerid"]; ok && v != nil {
			return v
		}
		return "005000000000001AAA"
	}
	return r.values[field]
}

func fullName(first, last any) any {
	var parts []string
	for _, v := range []any{first, last} {
		if s, ok := v.(string); ok && s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return strings.Join(parts, " ")
}

// ids: three characters of key prefix, a 12-character base-62 counter
// whose order is creation order, and the 3-character case-safe suffix.
const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func (s *Server) newIDLocked(o *object) string {
	s.seq++
	n := s.seq
	b := []byte("000000000000")
	for i := len(b) - 1; i >= 0 && n > 0; i-- {
		b[i] = base62[n%62]
		n /= 62
	}
	id := o.prefix + "5g" + string(b[2:])
	return id + checksum(id)
}

// checksum is the suffix that makes a 15-character id case-insensitive:
// for each 5-character chunk, a bit per upper-case letter.
func checksum(id15 string) string {
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"
	out := make([]byte, 3)
	for c := 0; c < 3; c++ {
		n := 0
		for i := 0; i < 5; i++ {
			if ch := id15[c*5+i]; ch >= 'A' && ch <= 'Z' {
				n |= 1 << i
			}
		}
		out[c] = alpha[n]
	}
	return string(out)
}

// id15 returns the 15-character form of an id ("" when malformed).
func id15(id string) string {
	switch len(id) {
	case 15:
		return id
	case 18:
		if !strings.EqualFold(checksum(id[:15]), id[15:]) {
			return ""
		}
		return id[:15]
	}
	return ""
}

// validID reports whether id is a well-formed id.
func validID(id string) bool {
	if id15(id) == "" {
		return false
	}
	for _, c := range id {
		if !strings.ContainsRune(base62, c) {
			return false
		}
	}
	return true
}

// fieldError is one entry of a record's errors[].
type fieldError struct {
	StatusCode string   `json:"statusCode"`
	Message    string   `json:"message"`
	Fields     []string `json:"fields"`
}

// checkValues checks the values a create or update sets: field types,
// lengths, e-mail syntax. Unknown or read-only fields are the caller's.
func (o *object) checkValues(vals map[string]any) []fieldError {
	var errs []fieldError
	for _, k := range sortedKeys(vals) {
		f := o.fields[k]
		v, _ := vals[k].(string)
		if vals[k] == nil {
			continue
		}
		if f.Length > 0 && utf8.RuneCountInString(v) > f.Length {
			errs = append(errs, fieldError{StatusCode: "STRING_TOO_LONG",
				Message: fmt.Sprintf("%s: data value too large: %s (max length=%d)", f.Name, v, f.Length), Fields: []string{f.Name}})
		}
		if e := checkPicklist(f, v); e != nil {
			errs = append(errs, *e)
		}
		if f.Type == "email" && v != "" {
			if a, err := mail.ParseAddress(v); err != nil || a.Address != v {
				errs = append(errs, fieldError{StatusCode: "INVALID_EMAIL_ADDRESS",
					Message: fmt.Sprintf("%s: invalid email address: %s", f.Name, v), Fields: []string{f.Name}})
			}
		}
	}
	return errs
}

// checkSaved checks the record as it would be saved: required fields and
// the validation rules.
func (s *Server) checkSavedLocked(o *object, vals map[string]any) []fieldError {
	var missing []string
	for _, k := range o.order {
		f := o.fields[k]
		if f.required() {
			if v, _ := vals[k].(string); strings.TrimSpace(v) == "" {
				missing = append(missing, f.Name)
			}
		}
	}
	if len(missing) > 0 {
		return []fieldError{{StatusCode: "REQUIRED_FIELD_MISSING",
			Message: "Required fields are missing: [" + strings.Join(missing, ", ") + "]", Fields: missing}}
	}
	named := map[string]any{}
	for k, v := range vals {
		named[o.fields[k].Name] = v
	}
	var errs []fieldError
	for _, rule := range s.opts.ValidationRules {
		if rule.Object != "" && !strings.EqualFold(rule.Object, o.name) {
			continue
		}
		if rule.Refuse != nil && rule.Refuse(named) {
			fields := []string{}
			if rule.Field != "" {
				fields = append(fields, rule.Field)
			}
			errs = append(errs, fieldError{StatusCode: "FIELD_CUSTOM_VALIDATION_EXCEPTION", Message: rule.Message, Fields: fields})
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// MakeID returns the 18-character form of a 15-character id: tests use
// it for well-formed ids no record has.
func MakeID(id15 string) string { return id15 + checksum(id15) }
