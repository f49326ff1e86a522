package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"regexp"
	"sort"
	"unicode/utf16"

	"github.com/syncd-io/syncd/workspace"
)

// node is a small JSON schema, enough for the request bodies of the spec.
// Validation lists every violation with its JSON-pointer path, in the
// wording of the TypeBox validator the public service's messages follow
// ("Expected string length less or equal to 75").
type node struct {
	typ      string // object, array, string, integer, number, boolean
	nullable bool
	props    map[string]*node
	required []string
	items    *node
	minItems int
	maxItems int // 0: no limit
	minLen   int
	maxLen   int // 0: no limit
	pattern  *regexp.Regexp
	format   string // email, uri
	enum     []string
	// starClears: an array of exactly ["*"] is valid whatever items says
	// (resourceIds' third way of clearing the filter).
	starClears bool
}

// fieldValue is the node of a custom field value: any of the kinds the
// published document allows in a request (an array of strings, a string,
// a boolean, a number, null); which one its field takes is checked by
// checkFieldValue.
var fieldValue = &node{typ: "fieldValue", nullable: true}

func str(minLen, maxLen int) *node { return &node{typ: "string", minLen: minLen, maxLen: maxLen} }

func (n *node) orNull() *node { c := *n; c.nullable = true; return &c }

func (n *node) withPattern(p string) *node {
	c := *n
	c.pattern = regexp.MustCompile(p)
	return &c
}

func (n *node) withFormat(f string) *node { c := *n; c.format = f; return &c }

func object(props map[string]*node, required ...string) *node {
	return &node{typ: "object", props: props, required: required}
}

func array(items *node, minItems, maxItems int) *node {
	return &node{typ: "array", items: items, minItems: minItems, maxItems: maxItems}
}

func enum(values ...string) *node { return &node{typ: "string", enum: values} }

// schemaMap describes n in errors[].schema.
func (n *node) schemaMap() map[string]any {
	if n.typ == "fieldValue" {
		return map[string]any{"type": []string{"array", "string", "boolean", "number", "null"}, "items": map[string]any{"type": "string"}}
	}
	m := map[string]any{"type": n.typ}
	if n.nullable {
		m["nullable"] = true
	}
	if n.minLen > 0 {
		m["minLength"] = n.minLen
	}
	if n.maxLen > 0 {
		m["maxLength"] = n.maxLen
	}
	if n.pattern != nil {
		m["pattern"] = n.pattern.String()
	}
	if n.format != "" {
		m["format"] = n.format
	}
	if len(n.enum) > 0 {
		m["enum"] = n.enum
	}
	if n.typ == "array" {
		if n.minItems > 0 {
			m["minItems"] = n.minItems
		}
		if n.maxItems > 0 {
			m["maxItems"] = n.maxItems
		}
	}
	if n.typ == "object" {
		m["additionalProperties"] = false
	}
	return m
}

func patternMessage(p string) string { return fmt.Sprintf("Expected string to match '%s'", p) }

// validate appends to errs every violation of v (decoded with UseNumber)
// against n, at path.
func (n *node) validate(path string, v any, errs *[]workspace.FieldError) {
	add := func(msg string, val any) {
		*errs = append(*errs, workspace.FieldError{Path: path, Message: msg, Value: val, Schema: n.schemaMap()})
	}
	if v == nil {
		if !n.nullable {
			add("Expected "+n.typ, nil)
		}
		return
	}
	switch n.typ {
	case "fieldValue":
		ok := true
		switch v := v.(type) {
		case bool, string, json.Number:
		case []any:
			for _, e := range v {
				_, isString := e.(string)
				ok = ok && isString
			}
		default:
			ok = false
		}
		if !ok {
			add("Expected array of strings, string, boolean, number or null", v)
		}
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			add("Expected object", v)
			return
		}
		for _, r := range n.required {
			if _, ok := m[r]; !ok {
				p := n.props[r]
				*errs = append(*errs, workspace.FieldError{Path: path + "/" + r, Message: "Expected required property", Schema: p.schemaMap()})
			}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := n.props[k]
			if !ok {
				*errs = append(*errs, workspace.FieldError{Path: path + "/" + k, Message: "Unexpected property", Value: m[k], Schema: n.schemaMap()})
				continue
			}
			p.validate(path+"/"+k, m[k], errs)
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			add("Expected array", v)
			return
		}
		if len(a) < n.minItems {
			add(fmt.Sprintf("Expected array length to be greater or equal to %d", n.minItems), v)
		}
		if n.maxItems > 0 && len(a) > n.maxItems {
			add(fmt.Sprintf("Expected array length to be less or equal to %d", n.maxItems), v)
		}
		if n.starClears && len(a) == 1 && a[0] == "*" {
			return
		}
		for i, item := range a {
			n.items.validate(fmt.Sprintf("%s/%d", path, i), item, errs)
		}
	case "integer":
		num, ok := v.(json.Number)
		if _, err := num.Int64(); !ok || err != nil {
			add("Expected integer", v)
		}
	case "number":
		num, ok := v.(json.Number)
		if _, err := num.Float64(); !ok || err != nil {
			add("Expected number", v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			add("Expected boolean", v)
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			add("Expected string", v)
			return
		}
		n.validateString(s, add)
	}
}

func (n *node) validateString(s string, add func(string, any)) {
	if len(n.enum) > 0 {
		for _, e := range n.enum {
			if s == e {
				return
			}
		}
		add("Expected union value", s)
		return
	}
	l := jsLength(s)
	if l < n.minLen {
		add(fmt.Sprintf("Expected string length greater or equal to %d", n.minLen), s)
		return
	}
	if n.maxLen > 0 && l > n.maxLen {
		add(fmt.Sprintf("Expected string length less or equal to %d", n.maxLen), s)
		return
	}
	if n.pattern != nil && !n.pattern.MatchString(s) {
		add(patternMessage(n.pattern.String()), s)
		return
	}
	if n.format != "" && !formatOK(n.format, s) {
		add(fmt.Sprintf("Expected string to match '%s' format", n.format), s)
	}
}

// jsLength is the length of s as the service's JavaScript counts it: in
// UTF-16 code units.
func jsLength(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// formatOK checks the string formats the spec uses.
func formatOK(format, s string) bool {
	switch format {
	case "email":
		a, err := mail.ParseAddress(s)
		return err == nil && a.Name == "" && a.Address == s
	case "uri":
		return isAbsoluteURI(s)
	}
	return true
}

// isAbsoluteURI reports whether s is an absolute URI with a scheme and a
// host, such as https://crm.example.com/contacts/42.
func isAbsoluteURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && u.Host != ""
}

// errBadJSON is a body that is not one JSON value.
var errBadJSON = errors.New("body is not valid JSON")

// decodeBody reads one JSON value from r, numbers kept as json.Number.
// An empty body decodes as nil.
func decodeBody(r io.Reader) (raw []byte, v any, err error) {
	raw, err = io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, nil, errBadJSON
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errBadJSON
	}
	return raw, v, nil
}
