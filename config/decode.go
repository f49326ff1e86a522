package config

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"gopkg.in/yaml.v3"
)

// decoder decodes a YAML tree into Go values strictly: every unknown key,
// duplicate key or value of the wrong kind is a problem naming its path,
// and decoding goes on so that all of them are reported at once. A null
// or missing value keeps the default already in the Go value.
type decoder struct {
	ps *problems
	// orig holds the text before expansion of scalars that held ${...}:
	// messages show it instead of the value.
	orig map[*yaml.Node]string
	// failed are the paths already reported (a variable not set): their
	// value is not checked again.
	failed map[string]bool
}

var (
	unmarshalerType  = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	textType         = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
	fieldSpecType    = reflect.TypeOf(mapping.FieldSpec{})
	connectorCfgType = reflect.TypeOf(ConnectorConfig{})
	durationType     = reflect.TypeOf(time.Duration(0))
)

// pair is one key and value of a mapping, after merges.
type pair struct{ key, value *yaml.Node }

// pairs returns a mapping's entries with YAML merge keys (<<) applied:
// merged entries first, so that the mapping's own override them.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	var merged, own []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Tag != "!!merge" && k.Value != "<<" {
			own = append(own, pair{k, v})
			continue
		}
		srcs := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			srcs = v.Content
		}
		for _, s := range srcs {
			s = resolveAlias(s)
			if s.Kind != yaml.MappingNode {
				d.ps.add(join(path, "<<"), "merge a mapping, such as <<: *defaults", "a merge key needs a mapping")
				continue
			}
			merged = append(merged, d.pairs(s, path)...)
		}
	}
	if len(merged) == 0 {
		return own
	}
	// Own keys replace merged ones of the same name.
	ownKeys := map[string]bool{}
	for _, p := range own {
		ownKeys[p.key.Value] = true
	}
	var out []pair
	seen := map[string]bool{}
	for _, p := range merged {
		if !ownKeys[p.key.Value] && !seen[p.key.Value] {
			out = append(out, p)
			seen[p.key.Value] = true
		}
	}
	return append(out, own...)
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// decode decodes n into v (addressable).
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	n = resolveAlias(n)
	if isNull(n) {
		return
	}
	t := v.Type()
	switch {
	case t.Kind() == reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		d.decode(n, v.Elem(), path)
		return
	case t == connectorCfgType:
		d.connector(n, v, path)
		return
	case t == fieldSpecType && n.Kind == yaml.MappingNode:
		d.structFields(n, v, path, "")
		return
	case reflect.PointerTo(t).Implements(unmarshalerType):
		if err := n.Decode(v.Addr().Interface()); err != nil {
			d.ps.add(path, "see config.example.yaml for the expected form", "%s", cleanYAMLError(err))
		}
		return
	case reflect.PointerTo(t).Implements(textType):
		d.text(n, v, path)
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		d.structFields(n, v, path, "")
	case reflect.Map:
		d.mapEntries(n, v, path)
	case reflect.Slice:
		d.sequence(n, v, path)
	default:
		d.scalar(n, v, path)
	}
}

// structFields decodes a mapping into a struct's fields by their yaml
// tags. The value of the key named hold is not decoded but returned.
func (d *decoder) structFields(n *yaml.Node, v reflect.Value, path, hold string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		d.ps.add(path, "indent its keys below it, one per line", "expected a mapping of keys, got %s", describe(n, d.orig))
		return nil
	}
	t := v.Type()
	fields := map[string]int{}
	var known []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = i
		known = append(known, name)
	}
	var held *yaml.Node
	seen := map[string]bool{}
	for _, p := range d.pairs(n, path) {
		key := p.key.Value
		kpath := join(path, key)
		if seen[key] {
			d.ps.add(kpath, "keep one of them", "duplicate key")
			continue
		}
		seen[key] = true
		i, ok := fields[key]
		switch {
		case !ok && path == "" && strings.HasPrefix(key, "x-"):
			// Top-level x- keys are free, to hold YAML anchors.
		case !ok:
			d.ps.add(kpath, unknownKeyHint(key, known), "unknown key")
		case key == hold:
			held = p.value
		default:
			d.decode(p.value, v.Field(i), kpath)
		}
	}
	return held
}

// mapEntries decodes a mapping into a map with string keys.
func (d *decoder) mapEntries(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.ps.add(path, "indent its entries below it, one per line", "expected a mapping, got %s", describe(n, d.orig))
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	seen := map[string]bool{}
	for _, p := range d.pairs(n, path) {
		key := p.key.Value
		kpath := join(path, key)
		if seen[key] {
			d.ps.add(kpath, "keep one of them", "duplicate key")
			continue
		}
		seen[key] = true
		e := reflect.New(v.Type().Elem()).Elem()
		d.decode(p.value, e, kpath)
		v.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
	}
}

// sequence decodes a list; a single scalar is a list of one.
func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	elems := n.Content
	if n.Kind != yaml.SequenceNode {
		if n.Kind != yaml.ScalarNode || v.Type().Elem().Kind() != reflect.String {
			d.ps.add(path, "write one entry per line, each starting with \"- \"", "expected a list, got %s", describe(n, d.orig))
			return
		}
		elems = []*yaml.Node{n}
	}
	out := reflect.MakeSlice(v.Type(), 0, len(elems))
	for i, c := range elems {
		e := reflect.New(v.Type().Elem()).Elem()
		d.decode(c, e, elementPath(path, i, resolveAlias(c)))
		out = reflect.Append(out, e)
	}
	v.Set(out)
}

// scalar decodes a leaf value.
func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	want := kindName(v.Type())
	if d.failed[path] {
		return
	}
	if n.Kind != yaml.ScalarNode {
		d.ps.add(path, "write a single value on the key's line", "expected %s, got %s", want, describe(n, d.orig))
		return
	}
	if err := n.Decode(v.Addr().Interface()); err != nil {
		hint := "write " + want
		if v.Type() == durationType {
			hint = `write a duration such as "30s", "5m" or "24h"`
		}
		d.ps.add(path, hint, "expected %s, got %s", want, describe(n, d.orig))
	}
}

// text decodes a scalar through the value's UnmarshalText (a connector's
// policies). A refused text is reported with the allowed values and, in a
// string-kind value, kept as written: Validate then sees what was written
// (its own report of the same path is dropped).
func (d *decoder) text(n *yaml.Node, v reflect.Value, path string) {
	if d.failed[path] {
		return
	}
	if n.Kind != yaml.ScalarNode {
		d.ps.add(path, "write a single value on the key's line", "expected %s, got %s", kindName(v.Type()), describe(n, d.orig))
		return
	}
	err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value))
	if err == nil {
		return
	}
	var ve *policy.ValueError
	if errors.As(err, &ve) {
		d.ps.add(path, allowedHint(ve.Allowed), "unknown value %s", describe(n, d.orig))
	} else {
		d.ps.add(path, "see config.example.yaml for the expected form", "%s: %v", describe(n, d.orig), err)
	}
	if v.Kind() == reflect.String {
		v.SetString(n.Value)
	}
}

// connector decodes one connector: its defaults first, then its keys,
// then its settings into the value of its type's NewSettings.
func (d *decoder) connector(n *yaml.Node, v reflect.Value, path string) {
	cc := DefaultConnector()
	settings := d.structFields(n, reflect.ValueOf(&cc).Elem(), path, "settings")
	if n.Kind != yaml.MappingNode {
		return
	}
	if typ, ok := connector.Lookup(cc.Type); ok {
		s := typ.NewSettings()
		if settings != nil && !isNull(resolveAlias(settings)) {
			sv := reflect.ValueOf(s)
			if sv.Kind() == reflect.Pointer {
				d.decode(settings, sv.Elem(), join(path, "settings"))
			} else {
				d.ps.add(join(path, "settings"), "a connector type's NewSettings must return a pointer", "settings of type %s cannot be decoded", cc.Type)
			}
		}
		cc.Settings = s
	}
	v.Set(reflect.ValueOf(cc))
}

// describe names a node's kind and, for scalars, its text: the text as
// written before expansion, so that expanded secrets never show.
func describe(n *yaml.Node, orig map[*yaml.Node]string) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	s := n.Value
	if o, ok := orig[n]; ok {
		s = o
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%q", s)
}

func kindName(t reflect.Type) string {
	if t == durationType {
		return "a duration"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number not below 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	}
	return "a " + t.String()
}

// unknownKeyHint suggests the closest known key.
func unknownKeyHint(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if strings.EqualFold(k, key) {
			best, bestD = k, 0
			break
		}
		if dist := editDistance(strings.ToLower(k), strings.ToLower(key)); dist < bestD {
			best, bestD = k, dist
		}
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	list := "known keys: " + strings.Join(sorted, ", ")
	if best != "" {
		return fmt.Sprintf("did you mean %q? (%s)", best, list)
	}
	return "remove it, or fix its name (" + list + ")"
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// cleanYAMLError drops yaml.v3's "yaml: unmarshal errors:" preamble.
func cleanYAMLError(err error) string {
	if te, ok := err.(*yaml.TypeError); ok {
		return strings.Join(te.Errors, "; ")
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}
