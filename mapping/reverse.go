package mapping

import (
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/syncd-io/syncd/workspace"
)

// FromContact reads every mapped target of a contact, whatever its
// direction, plus firstName, into canonical Fields. Values the workspace
// holds that do not normalise (a phone number typed by hand that is not
// one) are kept trimmed rather than dropped, so that they still compare
// and flow back as they are.
func (m *Mapper) FromContact(c workspace.Contact) Fields {
	out := Fields{}
	read := func(t target, region string) {
		v := contactValue(c, t)
		s, err := m.canonical(t, v, region)
		if err != nil {
			s, _ = single(v)
			s = strings.TrimSpace(s)
			if t.kind == kindEmail {
				s = strings.ToLower(s)
			}
		}
		if s != "" {
			out[t.key] = s
		}
	}
	if !hasTarget(m.fields, "firstName", false) {
		read(target{key: "firstName", kind: kindName, label: "firstName"}, "")
	}
	for _, f := range m.fields {
		read(f.target, f.region)
	}
	return out
}

// contactValue reads a target's raw value from a contact: the first item
// with the target's label for e-mails and phone numbers.
func contactValue(c workspace.Contact, t target) value {
	str := func(p *string) value {
		if p == nil {
			return scalar("")
		}
		return scalar(*p)
	}
	item := func(items []workspace.Item) value {
		for _, it := range items {
			if it.Name == t.label {
				return scalar(it.Value)
			}
		}
		return scalar("")
	}
	df := c.DefaultFields
	switch t.kind {
	case kindName:
		switch t.label {
		case "firstName":
			return str(df.FirstName)
		case "lastName":
			return str(df.LastName)
		case "company":
			return str(df.Company)
		case "role":
			return str(df.Role)
		}
	case kindEmail:
		return item(df.Emails)
	case kindPhone:
		return item(df.PhoneNumbers)
	case kindCustom:
		for _, cf := range c.CustomFields {
			if cf.Key == t.label {
				return listOf(cf.Value.Text())
			}
		}
	}
	return scalar("")
}

// ToRecord maps Fields back to a record's fields, for the targets flowing
// to-crm or both, through the reverse of each field's transforms. Every
// such field is present: an empty value is nil (clear it). Values are
// strings, or []string for lists (after a reverse split, or a custom
// field holding several values); connectors convert them to their
// columns' types.
func (m *Mapper) ToRecord(f Fields) (map[string]any, error) {
	out := map[string]any{}
	for _, fd := range m.fields {
		if !fd.backward() {
			continue
		}
		v, err := fd.reverseValue(f[fd.target.key])
		if err != nil {
			return nil, &RecordError{Field: fd.target.key, From: fd.from, Err: err}
		}
		out[fd.from] = v
	}
	return out, nil
}

// RecordChanges is ToRecord limited to the targets that differ between
// old and new: the record fields an update must write.
func (m *Mapper) RecordChanges(old, new Fields) (map[string]any, error) {
	set, removed := Diff(old, new)
	for _, k := range removed {
		set[k] = ""
	}
	out := map[string]any{}
	for _, fd := range m.fields {
		if _, changed := set[fd.target.key]; !changed || !fd.backward() {
			continue
		}
		v, err := fd.reverseValue(new[fd.target.key])
		if err != nil {
			return nil, &RecordError{Field: fd.target.key, From: fd.from, Err: err}
		}
		out[fd.from] = v
	}
	return out, nil
}

// reverseValue turns a canonical value into a record value.
func (f field) reverseValue(s string) (any, error) {
	v := scalar(s)
	if f.target.kind == kindCustom {
		if parts := splitMulti(s); f.listOut || len(parts) > 1 {
			v = listOf(parts)
		}
	}
	v, err := runChain(v, f.reverse, f.region)
	if err != nil {
		return nil, err
	}
	if e := v.each(); v.isList {
		if len(e) == 0 {
			return nil, nil
		}
		return e, nil
	}
	if strings.TrimSpace(v.s) == "" {
		if f.fallback != "" {
			return f.fallback, nil
		}
		return nil, nil
	}
	return v.s, nil
}

// templateFields returns the record fields a template reads: .name
// references and index . "name" calls.
func templateFields(t *template.Template) []string {
	var out []string
	var walk func(n parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			if len(n.Args) == 3 {
				if id, ok := n.Args[0].(*parse.IdentifierNode); ok && id.Ident == "index" {
					if _, dot := n.Args[1].(*parse.DotNode); dot {
						if s, ok := n.Args[2].(*parse.StringNode); ok {
							out = append(out, s.Text)
						}
					}
				}
			}
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.FieldNode:
			if len(n.Ident) > 0 {
				out = append(out, n.Ident[0])
			}
		case *parse.IfNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.WithNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.RangeNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.TemplateNode:
			walk(n.Pipe)
		}
	}
	if t.Tree != nil {
		walk(t.Tree.Root)
	}
	return out
}
