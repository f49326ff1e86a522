package mapping

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
)

// Errors wrapped by RecordError.
var (
	ErrNoExternalID  = errors.New("no externalId: every record needs one")
	ErrNoFirstName   = errors.New("no first name, and no fallback gave one (the workspace requires it)")
	ErrTooLong       = errors.New("value too long")
	ErrSeveralValues = errors.New("several values for a single-value field")
	ErrInvalidURL    = errors.New("invalid sourceUrl")
)

// RecordError is a record that cannot be mapped: it names the record, the
// target and the record field, so that it is reported, never dropped.
type RecordError struct {
	RecordID string
	Field    string // the workspace target: "phoneNumbers.mobile", "externalId"
	From     string // the record field, when one is involved
	Err      error
}

func (e *RecordError) Error() string {
	s := "record " + e.RecordID + ": field " + e.Field
	if e.From != "" {
		s += " (from " + e.From + ")"
	}
	return s + ": " + e.Err.Error()
}

func (e *RecordError) Unwrap() error { return e.Err }

// Mapped is a record mapped to the workspace side.
type Mapped struct {
	ExternalID string
	SourceURL  string
	Fields     Fields
	// Warnings are the record's values left out of Fields (a phone
	// number that is not one, with onInvalid: skip-field): the record
	// syncs without them. Nil when there are none.
	Warnings []FieldWarning
}

// FieldWarning is a record value that did not map and was left out, so
// that the rest of its record could sync. The record's own value is never
// written over because of it (see Mapper.ToContact).
type FieldWarning struct {
	Field string // the workspace target: "phoneNumbers.mobile"
	From  string // the record field
	Value string // the record's value, as read
	Err   error  // why it did not map
}

func (w FieldWarning) String() string {
	return "field " + w.Field + " (from " + w.From + "): " + w.Err.Error() + "; the record synced without it"
}

// WarnedTargets returns the targets of the warnings, for leaving them
// out of a write-back.
func (m Mapped) WarnedTargets() []string {
	if len(m.Warnings) == 0 {
		return nil
	}
	out := make([]string, len(m.Warnings))
	for i, w := range m.Warnings {
		out[i] = w.Field
	}
	return out
}

// field is one compiled field declaration.
type field struct {
	target    target
	from      string
	direction policy.Direction
	steps     []step
	reverse   []step
	region    string
	// listOut is true when the forward chain ends in a list (split): the
	// way back then starts from a list even with a single value.
	listOut bool
	// fallback is written back for an empty value (FieldSpec.Fallback).
	fallback string
	// phone: the field normalises phone numbers (a phoneNumbers.* target
	// or the e164 transform); deadLetter: one that does not normalise
	// fails the record (onInvalid: dead-letter) instead of being left out.
	phone, deadLetter bool
}

func (f field) forward() bool  { return f.direction != ToCRM }
func (f field) backward() bool { return f.direction != ToWorkspace }

// Mapper maps records to contacts and back. It is safe for concurrent use.
type Mapper struct {
	externalID   string
	sourceURL    *template.Template
	sourceFields []string // record fields the sourceUrl template reads
	// urlParts is the sourceUrl template when it is only text and record
	// fields (urlSimple), rendered without text/template.
	urlParts  []urlPart
	urlSimple bool
	fields    []field // sorted by target
	fallback  []string
	types     CustomFieldTypes // see customtypes.go
	// config is the digest of the configuration, fpFields the record
	// fields Fingerprint reads (all of them when fpAll): see Fingerprint.
	config   [32]byte
	digest   [32]byte // config without the build (Digest)
	fpFields []string
	fpAll    bool
	fpCustom []string // keys of the custom fields mapped to the workspace, whose types count too
}

var defaultFallback = []string{"@email", "@phone"}

// Compile checks a spec and returns its Mapper. defaultDirection is the
// connector's direction ("" means to-workspace); a field may not flow in
// a direction its connector does not. customFieldKeys, when not nil, are
// the workspace's custom field keys that custom.<key> targets must name.
// The error is a *SpecError listing every problem.
func Compile(spec Spec, defaultDirection policy.Direction, customFieldKeys []string) (*Mapper, error) {
	var probs []Problem
	add := func(path, msg, hint string) { probs = append(probs, Problem{Path: path, Message: msg, Hint: hint}) }
	if defaultDirection == "" {
		defaultDirection = ToWorkspace
	}
	if !defaultDirection.Valid() {
		add("", fmt.Sprintf("unknown connector direction %q", defaultDirection), "use to-workspace, to-crm or both")
		defaultDirection = Both
	}
	var customKeys map[string]bool
	if customFieldKeys != nil {
		customKeys = make(map[string]bool, len(customFieldKeys))
		for _, k := range customFieldKeys {
			customKeys[k] = true
		}
	}

	m := &Mapper{externalID: strings.TrimSpace(spec.ExternalID), fallback: spec.FirstNameFallback}
	if len(spec.Fields) == 0 {
		add("fields", "no fields are mapped", "map at least one workspace target, for example firstName: first_name")
	}
	keys := make([]string, 0, len(spec.Fields))
	for k := range spec.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	writers := map[string]string{} // record field -> target writing it back
	for _, key := range keys {
		fs := spec.Fields[key]
		path := "fields." + key
		f, ok := compileField(key, fs, defaultDirection, func(msg, hint string) { add(path, msg, hint) },
			func(sub, msg, hint string) { add(path+"."+sub, msg, hint) })
		if !ok {
			continue
		}
		if f.target.kind == kindCustom && customKeys != nil && !customKeys[f.target.label] {
			add(path, fmt.Sprintf("the workspace has no custom field with key %q", f.target.label), "define it in the workspace's app first, or fix the key")
		}
		if f.backward() {
			if other, dup := writers[f.from]; dup {
				add(path, fmt.Sprintf("record field %q is also written back by fields.%s", f.from, other), "let only one of them flow to-crm or both; set direction: to-workspace on the other")
			} else {
				writers[f.from] = key
			}
		}
		m.fields = append(m.fields, f)
	}

	if spec.SourceURL != "" {
		t, err := template.New("sourceUrl").Option("missingkey=error").Parse(spec.SourceURL)
		if err != nil {
			add("sourceUrl", "invalid template: "+strings.TrimPrefix(err.Error(), "template: "), `write a Go text/template such as "https://crm.example.com/contacts/{{ .id }}"`)
		} else {
			m.sourceURL = t
			m.sourceFields = templateFields(t)
			m.urlParts, m.urlSimple = simpleTemplate(t)
		}
	}

	hasForward := func(kind targetKind) bool {
		for _, f := range m.fields {
			if f.forward() && f.target.kind == kind {
				return true
			}
		}
		return false
	}
	for i, e := range spec.FirstNameFallback {
		path := fmt.Sprintf("firstNameFallback[%d]", i)
		switch {
		case strings.TrimSpace(e) == "":
			add(path, "empty entry", `name a record field, or use "default:<value>", "@email" or "@phone"`)
		case strings.HasPrefix(e, "default:") && strings.TrimSpace(strings.TrimPrefix(e, "default:")) == "":
			add(path, "default: needs a value", `write for example "default:Unknown"`)
		case e == "@email" && !hasForward(kindEmail):
			add(path, "@email needs a mapped e-mail address", "map an emails.<label> field to the workspace, or remove the entry")
		case e == "@phone" && !hasForward(kindPhone):
			add(path, "@phone needs a mapped phone number", "map a phoneNumbers.<label> field to the workspace, or remove the entry")
		case strings.HasPrefix(e, "@") && e != "@email" && e != "@phone":
			add(path, fmt.Sprintf("unknown fallback %q", e), "use @email or @phone, a record field, or default:<value>")
		}
	}
	anyForward := false
	for _, f := range m.fields {
		anyForward = anyForward || f.forward()
	}
	if anyForward && !hasTarget(m.fields, "firstName", true) && len(spec.FirstNameFallback) == 0 && !hasForward(kindEmail) && !hasForward(kindPhone) {
		add("fields.firstName", "not mapped, and nothing can stand in for it (the workspace requires a first name)",
			`map firstName, or set firstNameFallback, for example [company, "default:Unknown"]`)
	}
	if len(probs) > 0 {
		return nil, &SpecError{Problems: probs}
	}
	m.prepareFingerprint(spec, defaultDirection)
	return m, nil
}

func hasTarget(fields []field, key string, forward bool) bool {
	for _, f := range fields {
		if f.target.key == key && (!forward || f.forward()) {
			return true
		}
	}
	return false
}

// compileField checks one declaration, reporting problems through add,
// or addAt for those of one of its keys.
func compileField(key string, fs FieldSpec, connDir policy.Direction, add func(msg, hint string), addAt func(sub, msg, hint string)) (field, bool) {
	ok := true
	t, err := parseTarget(key)
	if err != nil {
		add(err.Error(), "targets are "+targetHelp)
		ok = false
	}
	f := field{target: t, from: strings.TrimSpace(fs.From), direction: policy.Direction(fs.Direction), region: strings.ToUpper(strings.TrimSpace(fs.Region))}
	if f.from == "" {
		add("no record field to map from", "write the record field's name, for example "+key+": my_column, or from: my_column")
		ok = false
	}
	if f.direction == "" {
		f.direction = connDir
	}
	switch {
	case !f.direction.Valid():
		add(fmt.Sprintf("unknown direction %q", fs.Direction), "use to-workspace, to-crm or both, or leave it out to follow the connector")
		ok = false
	case connDir != Both && f.direction != connDir:
		add(fmt.Sprintf("direction %s goes beyond the connector's direction %s", f.direction, connDir), "set the connector's direction to both, or remove the field's direction")
		ok = false
	}
	hasE164 := false
	for _, spec := range fs.Transform {
		st, err := parseTransform(trimTransform(spec))
		if err != nil {
			add(err.Error(), "fix the transform's name, or remove it")
			ok = false
			continue
		}
		hasE164 = hasE164 || st.def.name == "e164"
		if st.def.oneWay && f.backward() && f.direction.Valid() {
			add(fmt.Sprintf("%s has no way back, and the field flows %s", st, f.direction), "set direction: to-workspace on this field")
			ok = false
		}
		f.steps = append(f.steps, st)
	}
	if err := checkShapes(f.steps); err != nil {
		add(err.Error(), "keep one split or join per way, for example [\"split:;\"]")
		ok = false
	}
	if ok && t.kind != kindCustom && chainShape(shapeSame, f.steps) == shapeList {
		add(fmt.Sprintf("split makes a list, and %s takes a single value", key), "add join:<separator> after it, or map the list to a custom.<key> field")
		ok = false
	}
	if f.region != "" {
		if !phonenumbers.GetSupportedRegions()[f.region] {
			add(fmt.Sprintf("unknown region %q", fs.Region), "use a two-letter country code such as US, GB or FR")
			ok = false
		} else if t.kind != kindPhone && !hasE164 {
			add("region applies only to phone numbers", "remove it, or add the e164 transform")
			ok = false
		}
	}
	f.phone = t.kind == kindPhone || hasE164
	switch strings.TrimSpace(fs.OnInvalid) {
	case "", OnInvalidSkipField:
	case OnInvalidDeadLetter:
		f.deadLetter = true
	default:
		addAt("onInvalid", fmt.Sprintf("unknown value %q", fs.OnInvalid), "use skip-field (sync the record without the value and warn, the default) or dead-letter (set the whole record aside)")
		ok = false
	}
	if fs.OnInvalid != "" && !f.phone {
		addAt("onInvalid", "applies only to phone numbers", "remove it, or map the field to a phoneNumbers.<label> target or add the e164 transform")
		ok = false
	}
	f.reverse = reverseChain(f.steps)
	f.listOut = chainShape(shapeSame, f.steps) == shapeList
	if f.fallback = strings.TrimSpace(fs.Fallback); f.fallback != "" {
		switch {
		case !f.backward():
			add("fallback applies to the way back, and this field flows to-workspace only", "remove it, or let the field flow both ways")
			ok = false
		case f.listOut:
			add("fallback applies to single values, and this field's record value is a list", "remove it")
			ok = false
		}
	}
	return f, ok
}

// ForwardTargets returns the targets ToContact may set, sorted. It always
// holds firstName, which the fallback fills when it is not mapped.
func (m *Mapper) ForwardTargets() []string {
	out := []string{"firstName"}
	for _, f := range m.fields {
		if f.forward() && f.target.key != "firstName" {
			out = append(out, f.target.key)
		}
	}
	sort.Strings(out)
	return out
}

// ReverseTargets returns the targets ToRecord writes back, sorted.
func (m *Mapper) ReverseTargets() []string {
	var out []string
	for _, f := range m.fields {
		if f.backward() {
			out = append(out, f.target.key)
		}
	}
	return out
}

// SourceFields returns every record field the mapping reads: the mapped
// fields, the externalId field, those of the sourceUrl template and of
// the first-name fallback. Sorted, without duplicates.
func (m *Mapper) SourceFields() []string {
	set := map[string]bool{}
	for _, f := range m.fields {
		set[f.from] = true
	}
	if m.externalID != "" {
		set[m.externalID] = true
	}
	for _, s := range m.sourceFields {
		set[s] = true
	}
	for _, e := range m.fallback {
		if e != "" && !strings.HasPrefix(e, "@") && !strings.HasPrefix(e, "default:") {
			set[e] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Describe returns one line per mapped field, for summaries:
// "phoneNumbers.mobile <- mobile [e164] (both)".
func (m *Mapper) Describe() []string {
	out := make([]string, 0, len(m.fields))
	for _, f := range m.fields {
		arrow := "<-"
		switch f.direction {
		case ToCRM:
			arrow = "->"
		case Both:
			arrow = "<->"
		}
		s := f.target.key + " " + arrow + " " + f.from
		if len(f.steps) > 0 {
			names := make([]string, len(f.steps))
			for i, st := range f.steps {
				names[i] = st.String()
			}
			s += " [" + strings.Join(names, ", ") + "]"
		}
		out = append(out, s)
	}
	return out
}

// single reads a value that must be one string.
func single(v value) (string, error) {
	if !v.isList {
		return v.s, nil
	}
	e := v.each()
	switch len(e) {
	case 0:
		return "", nil
	case 1:
		return e[0], nil
	}
	return "", fmt.Errorf("%w (%d); add a join:<separator> transform", ErrSeveralValues, len(e))
}

// canonical puts a transformed value in the canonical form of its target.
func canonical(t target, v value, region string) (string, error) {
	if t.kind == kindCustom {
		return canonicalMulti(v.each()), nil
	}
	s, err := single(v)
	if err != nil {
		return "", err
	}
	switch t.kind {
	case kindEmail:
		return NormalizeEmail(s)
	case kindPhone:
		return NormalizePhone(s, region)
	}
	return strings.TrimSpace(s), nil
}

// ToContact maps a record to the workspace side: the fields flowing
// to-workspace or both, the externalId, the sourceUrl and a first name.
// A record that cannot be mapped gives one *RecordError per problem
// (joined with errors.Join; errors.As finds the first).
func (m *Mapper) ToContact(r connector.Record) (Mapped, error) {
	var errs []error
	fail := func(target, from string, err error) {
		errs = append(errs, &RecordError{RecordID: r.ID, Field: target, From: from, Err: err})
	}
	out := Mapped{Fields: Fields{}}

	ext, err := r.ID, error(nil)
	if m.externalID != "" {
		ext, err = single(toValue(r.Fields[m.externalID]))
	}
	ext = strings.TrimSpace(ext)
	switch {
	case err != nil:
		fail("externalId", m.externalID, err)
	case ext == "":
		fail("externalId", m.externalID, ErrNoExternalID)
	case utf8.RuneCountInString(ext) > workspace.MaxExternalIDLen:
		fail("externalId", m.externalID, fmt.Errorf("%w: %d characters, the workspace takes at most %d", ErrTooLong, utf8.RuneCountInString(ext), workspace.MaxExternalIDLen))
	default:
		out.ExternalID = ext
	}

	for _, f := range m.fields {
		if !f.forward() {
			continue
		}
		raw := toValue(r.Fields[f.from])
		if s, serr := single(raw); f.fallback != "" && serr == nil && strings.TrimSpace(s) == f.fallback {
			raw = scalar("") // syncd's own stand-in: no value
		}
		v, err := runChain(raw, f.steps, f.region)
		if err == nil {
			var s string
			if s, err = m.canonical(f.target, v, f.region); err == nil && s != "" {
				out.Fields[f.target.key] = s
			}
		}
		if err != nil {
			if f.phone && !f.deadLetter && errors.Is(err, ErrInvalidPhone) {
				out.Warnings = append(out.Warnings, FieldWarning{Field: f.target.key, From: f.from, Value: rawText(raw), Err: err})
				continue
			}
			fail(f.target.key, f.from, err)
		}
	}

	if out.Fields["firstName"] == "" && len(errs) == 0 {
		if name := m.firstNameFallback(r, out.Fields); name != "" {
			out.Fields["firstName"] = name
		} else {
			from := ""
			for _, f := range m.fields {
				if f.target.key == "firstName" {
					from = f.from
				}
			}
			fail("firstName", from, ErrNoFirstName)
		}
	}

	if m.sourceURL != nil {
		u, err := m.renderSourceURL(r)
		if err != nil {
			fail("sourceUrl", "", err)
		}
		out.SourceURL = u
	}

	switch len(errs) {
	case 0:
		return out, nil
	case 1:
		return Mapped{}, errs[0]
	}
	return Mapped{}, errors.Join(errs...)
}

// rawText is a record value as text, for a warning: a list's values
// joined with "; ".
func rawText(v value) string {
	if v.isList {
		return strings.Join(v.list, "; ")
	}
	return v.s
}

// firstNameFallback returns the first non-empty entry of the fallback.
func (m *Mapper) firstNameFallback(r connector.Record, fields Fields) string {
	chain := m.fallback
	if len(chain) == 0 {
		chain = defaultFallback
	}
	first := func(prefix string) string {
		for _, k := range fields.keys() {
			if strings.HasPrefix(k, prefix) {
				return fields[k]
			}
		}
		return ""
	}
	for _, e := range chain {
		var s string
		switch {
		case e == "@email":
			s, _, _ = strings.Cut(first("emails."), "@")
		case e == "@phone":
			s = first("phoneNumbers.")
		case strings.HasPrefix(e, "default:"):
			s = strings.TrimPrefix(e, "default:")
		default:
			s = toString(r.Fields[e])
			if v := toValue(r.Fields[e]); v.isList {
				s = strings.Join(v.each(), " ")
			}
		}
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}

// renderSourceURL executes the sourceUrl template over the record's
// fields, as strings.
func (m *Mapper) renderSourceURL(r connector.Record) (string, error) {
	s, ok := m.renderSimple(r)
	if !ok {
		data := make(map[string]string, len(r.Fields))
		for k, v := range r.Fields {
			data[k] = toString(v)
		}
		var b strings.Builder
		if err := m.sourceURL.Execute(&b, data); err != nil {
			return "", fmt.Errorf("%w: %v", ErrInvalidURL, strings.TrimPrefix(err.Error(), "template: "))
		}
		s = b.String()
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if n := utf8.RuneCountInString(s); n > workspace.MaxSourceURLLen {
		return "", fmt.Errorf("%w: %d characters, the workspace takes at most %d", ErrInvalidURL, n, workspace.MaxSourceURLLen)
	}
	if u, err := url.Parse(s); err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("%w: %q is not an absolute URL", ErrInvalidURL, s)
	}
	return s, nil
}

// trimTransform trims the space around a transform, but not an argument
// that is nothing but white space: split:"\n" splits at line breaks.
func trimTransform(spec string) string {
	if name, arg, ok := strings.Cut(spec, ":"); ok && arg != "" && strings.TrimSpace(arg) == "" {
		return strings.TrimSpace(name) + ":" + arg
	}
	return strings.TrimSpace(spec)
}
