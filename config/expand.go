package config

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expandEnv replaces ${VAR} and ${VAR:-default} in every scalar value of
// the tree, in place. "$${" stands for a literal "${". A variable that
// is unset or empty, without a default, is a problem naming the path and
// the variable (never a value). It returns the original text of every
// scalar it changed, for messages that must not show expanded values, and
// the values of the variables it used by name.
func expandEnv(root *yaml.Node, getenv func(string) string, ps *problems) (orig map[*yaml.Node]string, used map[string]string) {
	orig = map[*yaml.Node]string{}
	used = map[string]string{}
	getenv = recordEnv(getenv, used)
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.AliasNode:
			walk(n.Alias, path)
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], join(path, n.Content[i].Value))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, elementPath(path, i, c))
			}
		case yaml.ScalarNode:
			if !strings.Contains(n.Value, "$") {
				return
			}
			out, changed := expandString(n.Value, path, getenv, ps)
			if !changed {
				return
			}
			orig[n] = n.Value
			n.Value = out
			// A plain scalar is resolved again from its new text, so that
			// rateLimit: ${RATE} is a number, but never as null: an
			// expanded "null" or "~" stays a string.
			if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && n.Tag == "!!str" {
				switch out {
				case "", "~", "null", "Null", "NULL":
				default:
					n.Tag = ""
				}
			}
		}
	}
	walk(root, "")
	return orig, used
}

// recordEnv wraps getenv to note every value it returns.
func recordEnv(getenv func(string) string, used map[string]string) func(string) string {
	return func(name string) string {
		v := getenv(name)
		if v != "" {
			used[name] = v
		}
		return v
	}
}

// secretValues returns the values held by secret keys (IsSecretKey)
// anywhere in the tree, after expansion.
func secretValues(root *yaml.Node) []string {
	var out []string
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if v := resolveAlias(n.Content[i+1]); v.Kind == yaml.ScalarNode && IsSecretKey(n.Content[i].Value) && v.Value != "" {
					out = append(out, v.Value)
				}
			}
		}
		walk(n.Alias)
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	return out
}

// minScrubLen is the shortest value scrubbed from messages: shorter ones
// are no secrets, and replacing them would garble the text.
const minScrubLen = 4

// scrub replaces, in every problem, the values of the environment
// variables used by "${NAME}" and the values of secret keys by
// "(secret)": a secret put under the wrong key is not echoed back.
func scrub(ps problems, used map[string]string, secrets []string) {
	var pairs []string
	names := make([]string, 0, len(used))
	for name := range used {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if v := used[name]; len(v) >= minScrubLen {
			pairs = append(pairs, v, "${"+name+"}")
		}
	}
	for _, s := range secrets {
		if len(s) >= minScrubLen {
			pairs = append(pairs, s, "(secret)")
		}
	}
	if len(pairs) == 0 {
		return
	}
	r := strings.NewReplacer(pairs...)
	for i := range ps {
		ps[i].Message = r.Replace(ps[i].Message)
		ps[i].Hint = r.Replace(ps[i].Hint)
	}
}

// expandString expands the references of one value.
func expandString(s, path string, getenv func(string) string, ps *problems) (string, bool) {
	var b strings.Builder
	changed := false
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), changed
		}
		if i > 0 && s[i-1] == '$' { // $${ is a literal ${
			b.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			changed = true
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			ps.add(path, "write ${NAME} or ${NAME:-default}, or $${ for a literal ${", "unterminated ${ reference")
			return "", true
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		switch {
		case !envName.MatchString(name):
			ps.add(path, "variable names are letters, digits and _, such as ${WORKSPACE_API_KEY}", "invalid environment reference")
		default:
			v := getenv(name)
			switch {
			case v != "":
				b.WriteString(v)
			case hasDef:
				b.WriteString(def)
			default:
				ps.add(path, fmt.Sprintf("export %s, or write ${%s:-default} to give a default", name, name), "environment variable %s is not set", name)
			}
		}
		changed = true
		s = s[i+end+1:]
	}
}

// elementPath names a sequence element: by its name key when it is a
// mapping holding one ("connectors[crm]"), else by index.
func elementPath(path string, i int, n *yaml.Node) string {
	if n.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(n.Content); j += 2 {
			if k, v := n.Content[j], n.Content[j+1]; k.Value == "name" && v.Kind == yaml.ScalarNode && v.Value != "" && !strings.Contains(v.Value, "${") {
				return fmt.Sprintf("%s[%s]", path, v.Value)
			}
		}
	}
	return fmt.Sprintf("%s[%d]", path, i)
}
