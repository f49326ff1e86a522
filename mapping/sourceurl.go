package mapping

import (
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/syncd-io/syncd/connector"
)

// urlPart is a piece of a simple sourceUrl template: text, or the value of
// a record field ({{ .name }}, or {{ index . "name" }} when index).
type urlPart struct {
	text, field string
	isField     bool
	index       bool
}

// simpleTemplate returns the parts of a template made only of text and
// record fields; ok false for any other template (functions, pipelines,
// conditions), which text/template renders.
func simpleTemplate(t *template.Template) (parts []urlPart, ok bool) {
	if t.Tree == nil || t.Tree.Root == nil {
		return nil, false
	}
	for _, n := range t.Tree.Root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			parts = append(parts, urlPart{text: string(n.Text)})
		case *parse.ActionNode:
			if n.Pipe == nil || len(n.Pipe.Decl) > 0 || len(n.Pipe.Cmds) != 1 {
				return nil, false
			}
			args := n.Pipe.Cmds[0].Args
			switch {
			case len(args) == 1:
				f, ok := args[0].(*parse.FieldNode)
				if !ok || len(f.Ident) != 1 {
					return nil, false
				}
				parts = append(parts, urlPart{field: f.Ident[0], isField: true})
			case len(args) == 3:
				id, isIdent := args[0].(*parse.IdentifierNode)
				_, isDot := args[1].(*parse.DotNode)
				name, isString := args[2].(*parse.StringNode)
				if !isIdent || id.Ident != "index" || !isDot || !isString {
					return nil, false
				}
				parts = append(parts, urlPart{field: name.Text, isField: true, index: true})
			default:
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return parts, true
}

// renderSimple renders a simple template as text/template would, with the
// record's values as strings; ok false when the template is not simple or
// names a field the record lacks (text/template reports that error: the
// template runs with missingkey=error, while index gives "").
func (m *Mapper) renderSimple(r connector.Record) (string, bool) {
	if !m.urlSimple {
		return "", false
	}
	var b strings.Builder
	for _, p := range m.urlParts {
		if !p.isField {
			b.WriteString(p.text)
			continue
		}
		v, ok := r.Fields[p.field]
		if !ok && !p.index {
			return "", false
		}
		b.WriteString(toString(v))
	}
	return b.String(), true
}
