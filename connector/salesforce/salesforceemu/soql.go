package salesforceemu

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The SOQL the server understands: SELECT field, ... FROM object
// [WHERE condition] [ORDER BY field [ASC|DESC] [NULLS FIRST|LAST], ...]
// [LIMIT n]. Conditions compare a field with a literal (=, !=, <>, <, <=,
// >, >=, [NOT] IN (...)), joined by AND or OR (SOQL refuses both at one
// level without parentheses) and NOT. Literals: 'strings' with backslash
// escapes, dateTimes (2026-01-05T09:00:00Z, +hh:mm offsets), TRUE, FALSE,
// NULL, numbers. Anything else is refused as MALFORMED_QUERY: a real org
// would take some of it, but a test must never pass on SOQL the server
// only pretends to run.

type soql struct {
	count   bool     // SELECT COUNT(): the answer is totalSize alone
	fields  []string // lower-case
	object  string
	where   node
	orderBy []orderKey
	limit   int // -1: none
}

type orderKey struct {
	field      string
	desc       bool
	nullsFirst bool
}

type node interface{}

type logic struct {
	op   string // "and", "or"
	args []node
}

type not struct{ arg node }

type cmp struct {
	field string
	op    string // =, !=, <, <=, >, >=, in, notin
	vals  []literal
}

type literal struct {
	kind string // string, datetime, bool, null, number
	s    string
	t    time.Time
	b    bool
	n    float64
}

type soqlError struct{ code, msg string }

func (e *soqlError) Error() string { return e.code + ": " + e.msg }

func malformed(format string, a ...any) *soqlError {
	return &soqlError{"MALFORMED_QUERY", fmt.Sprintf(format, a...)}
}

var tokenRE = regexp.MustCompile(`^(?:\s+|` +
	`(?P<dt>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,3})?(?:Z|[+-]\d{2}:\d{2}))|` +
	`(?P<num>-?\d+(?:\.\d+)?)|` +
	`(?P<id>[A-Za-z_][A-Za-z0-9_]*)|` +
	`(?P<op><=|>=|!=|<>|=|<|>)|` +
	`(?P<punct>[(),])|` +
	`(?P<str>'(?:[^'\\]|\\.)*'))`)

type token struct {
	kind string // dt, num, id, op, punct, str
	text string
}

func lex(q string) ([]token, error) {
	var out []token
	names := tokenRE.SubexpNames()
	for len(q) > 0 {
		m := tokenRE.FindStringSubmatchIndex(q)
		if m == nil {
			return nil, malformed("unexpected token at %q", shorten(q))
		}
		for i := 1; i < len(names); i++ {
			if m[2*i] >= 0 {
				out = append(out, token{kind: names[i], text: q[m[2*i]:m[2*i+1]]})
			}
		}
		q = q[m[1]:]
	}
	return out, nil
}

func shorten(s string) string {
	if len(s) > 30 {
		return s[:30] + "..."
	}
	return s
}

type parser struct {
	toks []token
	pos  int
}

func (p *parser) peek() token {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return token{}
}

func (p *parser) keyword(kw string) bool {
	if t := p.peek(); t.kind == "id" && strings.EqualFold(t.text, kw) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) punct(c string) bool {
	if t := p.peek(); t.kind == "punct" && t.text == c {
		p.pos++
		return true
	}
	return false
}

func (p *parser) ident() (string, error) {
	t := p.peek()
	if t.kind != "id" || isReserved(t.text) {
		return "", malformed("unexpected token: '%s'", t.text)
	}
	p.pos++
	return t.text, nil
}

func isReserved(s string) bool {
	switch strings.ToUpper(s) {
	case "SELECT", "FROM", "WHERE", "ORDER", "BY", "LIMIT", "AND", "OR", "NOT", "IN", "ASC", "DESC", "NULLS", "OFFSET", "GROUP", "HAVING", "WITH", "FOR", "USING", "TYPEOF":
		return true
	}
	return false
}

func parseSOQL(q string) (*soql, error) {
	toks, err := lex(q)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	out := &soql{limit: -1}
	if !p.keyword("SELECT") {
		return nil, malformed("a query starts with SELECT")
	}
	if len(p.toks) > p.pos+3 && strings.EqualFold(p.peek().text, "COUNT") && p.toks[p.pos+1].text == "(" && p.toks[p.pos+2].text == ")" {
		p.pos += 3
		out.count = true
		if p.peek().text == "," {
			return nil, malformed("COUNT() must be the only item of SELECT")
		}
	}
	for !out.count {
		f, err := p.ident()
		if err != nil {
			return nil, err
		}
		if p.peek().kind == "punct" && p.peek().text == "(" {
			return nil, malformed("functions in SELECT (%s) are not supported by this test server", f)
		}
		out.fields = append(out.fields, strings.ToLower(f))
		if !p.punct(",") {
			break
		}
	}
	if !p.keyword("FROM") {
		return nil, malformed("unexpected token: '%s'", p.peek().text)
	}
	if out.object, err = p.ident(); err != nil {
		return nil, err
	}
	if p.keyword("WHERE") {
		if out.where, err = p.condition(); err != nil {
			return nil, err
		}
	}
	if p.keyword("ORDER") {
		if !p.keyword("BY") {
			return nil, malformed("ORDER must be followed by BY")
		}
		for {
			f, err := p.ident()
			if err != nil {
				return nil, err
			}
			k := orderKey{field: strings.ToLower(f), nullsFirst: true}
			if p.keyword("DESC") {
				k.desc, k.nullsFirst = true, false
			} else {
				p.keyword("ASC")
			}
			if p.keyword("NULLS") {
				switch {
				case p.keyword("FIRST"):
					k.nullsFirst = true
				case p.keyword("LAST"):
					k.nullsFirst = false
				default:
					return nil, malformed("NULLS must be followed by FIRST or LAST")
				}
			}
			out.orderBy = append(out.orderBy, k)
			if !p.punct(",") {
				break
			}
		}
	}
	if p.keyword("LIMIT") {
		t := p.peek()
		n, err := strconv.Atoi(t.text)
		if t.kind != "num" || err != nil || n < 0 {
			return nil, malformed("LIMIT must be a non-negative integer, not %q", t.text)
		}
		p.pos++
		out.limit = n
	}
	if p.pos < len(p.toks) {
		return nil, malformed("unexpected token: '%s'", p.peek().text)
	}
	if out.count && len(out.orderBy) > 0 {
		return nil, malformed("ORDER BY cannot be used with COUNT()")
	}
	return out, nil
}

// condition parses terms joined by one kind of connective.
func (p *parser) condition() (node, error) {
	first, err := p.unary()
	if err != nil {
		return nil, err
	}
	l := &logic{args: []node{first}}
	for {
		var op string
		switch {
		case p.keyword("AND"):
			op = "and"
		case p.keyword("OR"):
			op = "or"
		default:
			if len(l.args) == 1 {
				return first, nil
			}
			return l, nil
		}
		if l.op != "" && l.op != op {
			return nil, malformed("unexpected token: '%s' (use parentheses to mix AND and OR)", strings.ToUpper(op))
		}
		l.op = op
		next, err := p.unary()
		if err != nil {
			return nil, err
		}
		l.args = append(l.args, next)
	}
}

func (p *parser) unary() (node, error) {
	if p.keyword("NOT") {
		n, err := p.unary()
		return not{n}, err
	}
	if p.punct("(") {
		n, err := p.condition()
		if err != nil {
			return nil, err
		}
		if !p.punct(")") {
			return nil, malformed("missing ')'")
		}
		return n, nil
	}
	f, err := p.ident()
	if err != nil {
		return nil, err
	}
	c := cmp{field: strings.ToLower(f)}
	switch t := p.peek(); {
	case t.kind == "op":
		p.pos++
		c.op = t.text
		if c.op == "<>" {
			c.op = "!="
		}
		v, err := p.literal()
		if err != nil {
			return nil, err
		}
		c.vals = []literal{v}
	case p.keyword("IN"):
		c.op = "in"
	case p.keyword("NOT"):
		if !p.keyword("IN") {
			return nil, malformed("NOT must be followed by IN here")
		}
		c.op = "notin"
	default:
		return nil, malformed("unexpected token: '%s'", t.text)
	}
	if c.op == "in" || c.op == "notin" {
		if !p.punct("(") {
			return nil, malformed("IN must be followed by '('")
		}
		for {
			v, err := p.literal()
			if err != nil {
				return nil, err
			}
			c.vals = append(c.vals, v)
			if !p.punct(",") {
				break
			}
		}
		if !p.punct(")") {
			return nil, malformed("missing ')'")
		}
	}
	return c, nil
}

func (p *parser) literal() (literal, error) {
	t := p.peek()
	p.pos++
	switch t.kind {
	case "str":
		return literal{kind: "string", s: unescape(t.text[1 : len(t.text)-1])}, nil
	case "dt":
		v, err := time.Parse(time.RFC3339, t.text)
		if err != nil {
			return literal{}, malformed("invalid dateTime %s", t.text)
		}
		return literal{kind: "datetime", t: v}, nil
	case "num":
		n, _ := strconv.ParseFloat(t.text, 64)
		return literal{kind: "number", n: n}, nil
	case "id":
		switch strings.ToUpper(t.text) {
		case "TRUE", "FALSE":
			return literal{kind: "bool", b: strings.EqualFold(t.text, "TRUE")}, nil
		case "NULL":
			return literal{kind: "null"}, nil
		}
	}
	return literal{}, malformed("unexpected token: '%s'", t.text)
}

func unescape(s string) string {
	r := strings.NewReplacer(`\'`, `'`, `\\`, `\`, `\n`, "\n", `\t`, "\t", `\"`, `"`)
	return r.Replace(s)
}
