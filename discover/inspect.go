package discover

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/syncd-io/syncd/connector"
)

// Request is what init asks discovery to look at.
type Request struct {
	// Type is the connector type.
	Type string
	// Set are the connector's settings as given (--set KEY=VALUE): YAML
	// values; a ${NAME} reference is read from Getenv and written as is.
	Set map[string]string
	// Getenv reads the environment.
	Getenv func(string) string
	// Samples is how many records to read for sample values; 0 means 20.
	Samples int
}

// preparer fills in what a connector type needs found before it can be
// opened (a CSV file's id column, a table's primary key and change
// cursor), on the settings decoded so far.
type preparer func(ctx context.Context, in *inspection) error

// preparers are the types that need one; a type without one is opened
// with the settings as given.
var preparers = map[string]preparer{}

// inspection is one discovery in progress.
type inspection struct {
	req      Request
	values   map[string]string // resolved values, by key
	src      *Source
	types    map[string]Field // field facts a preparer found, by name
	settings connector.Settings
}

// set records a setting found (not given) with why.
func (in *inspection) set(key, value, why string) {
	in.values[key] = value
	in.src.Settings = append(in.src.Settings, Setting{Key: key, Value: value, Why: why})
}

// given reports whether the operator gave the setting key.
func (in *inspection) given(key string) bool {
	_, ok := in.req.Set[key]
	return ok
}

var refRE = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// Inspect connects to the source the request names and reads its fields
// and a sample of its records. A missing required setting is a
// *MissingError naming each.
func Inspect(ctx context.Context, req Request) (*Source, error) {
	t, ok := connector.Lookup(req.Type)
	if !ok {
		return nil, fmt.Errorf("type %q: want one of %s", req.Type, strings.Join(connector.Types(), ", "))
	}
	if req.Samples <= 0 {
		req.Samples = 20
	}
	if req.Getenv == nil {
		req.Getenv = func(string) string { return "" }
	}
	in := &inspection{req: req, values: map[string]string{}, src: &Source{Type: t.Name, Skip: map[string]string{}}, types: map[string]Field{}}
	if err := in.resolve(t); err != nil {
		return nil, err
	}
	if missing := Missing(t.Name, in.values); len(missing) > 0 {
		return nil, &MissingError{Keys: missing}
	}
	if p := preparers[t.Name]; p != nil {
		if err := p(ctx, in); err != nil {
			return nil, err
		}
	}
	set, err := decodeSettings(t, in.values)
	if err != nil {
		return nil, err
	}
	if errs := set.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("settings: %w", errors.Join(errs...))
	}
	in.settings = set
	if err := in.read(ctx, t); err != nil {
		return nil, err
	}
	return in.src, nil
}

// resolve reads the given settings: ${NAME} references from the
// environment, secrets written as references to a variable to export.
func (in *inspection) resolve(t connector.Type) error {
	secrets := SecretKeys(t)
	keys := make([]string, 0, len(in.req.Set))
	for k := range in.req.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := in.req.Set[k]
		if m := refRE.FindStringSubmatch(v); m != nil {
			val := in.req.Getenv(m[1])
			if val == "" {
				return fmt.Errorf("%s: %s is not set in the environment", k, v)
			}
			in.values[k] = val
			in.src.Settings = append(in.src.Settings, Setting{Key: k, Value: v})
			if secrets[k] {
				in.src.Exports = append(in.src.Exports, Export{Name: m[1], Value: val, Set: true})
			}
			continue
		}
		in.values[k] = v
		if secrets[k] {
			name := EnvName(t.Name, k)
			in.src.Settings = append(in.src.Settings, Setting{Key: k, Value: "${" + name + "}", Why: "a secret: export " + name})
			in.src.Exports = append(in.src.Exports, Export{Name: name, Value: v, Set: in.req.Getenv(name) == v})
			continue
		}
		in.src.Settings = append(in.src.Settings, Setting{Key: k, Value: yamlValue(v)})
	}
	return nil
}

// yamlValue is a --set value as YAML reads it (a number, a list), or the
// string.
func yamlValue(v string) any {
	var out any
	if err := yaml.Unmarshal([]byte(v), &out); err != nil || out == nil {
		return v
	}
	switch out.(type) {
	case map[string]any:
		return v
	}
	return out
}

// SecretKeys are the settings of a connector type that hold secrets: its
// connector.Secret fields and a dsn.
func SecretKeys(t connector.Type) map[string]bool {
	out := map[string]bool{"dsn": true}
	rt := reflect.TypeOf(t.NewSettings())
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if rt.Kind() != reflect.Struct {
		return out
	}
	secret := reflect.TypeOf(connector.Secret(""))
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if f.Type == secret {
			out[strings.Split(f.Tag.Get("yaml"), ",")[0]] = true
		}
	}
	return out
}

// EnvName is the environment variable init writes a secret setting as:
// POSTGRES_DSN, HUBSPOT_TOKEN, PIPEDRIVE_API_TOKEN.
func EnvName(typ, key string) string {
	var b strings.Builder
	b.WriteString(strings.ToUpper(typ))
	b.WriteByte('_')
	for i, r := range key {
		if r >= 'A' && r <= 'Z' && i > 0 {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// Missing lists the required settings of a connector type that values
// lack, as the type's own Validate names them ("table: required").
func Missing(typ string, values map[string]string) []string {
	t, ok := connector.Lookup(typ)
	if !ok {
		return nil
	}
	probe := map[string]string{}
	for k, v := range values {
		probe[k] = v
	}
	set, err := decodeSettings(t, probe)
	if err != nil {
		return nil
	}
	var missing []string
	for _, e := range set.Validate() {
		msg := e.Error()
		if key, rest, ok := strings.Cut(msg, ": "); ok && strings.Contains(rest, "required") && !strings.ContainsAny(key, " .") {
			missing = append(missing, msg)
		}
	}
	return missing
}

// decodeSettings decodes values into the type's settings, strictly, as
// the configuration would.
func decodeSettings(t connector.Type, values map[string]string) (connector.Settings, error) {
	node := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var v yaml.Node
		if err := v.Encode(yamlValue(values[k])); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, &v)
	}
	out, err := yaml.Marshal(node)
	if err != nil {
		return nil, err
	}
	set := t.NewSettings()
	dec := yaml.NewDecoder(strings.NewReader(string(out)))
	dec.KnownFields(true)
	if err := dec.Decode(set); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	return set, nil
}

// errEnough stops a snapshot once enough records are read.
var errEnough = errors.New("enough records")

// read opens the connector and reads its fields and the first records.
func (in *inspection) read(ctx context.Context, t connector.Type) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	src, err := t.Open(ctx, connector.Options{Name: "init", Settings: in.settings, Inspect: true})
	if err != nil {
		return fmt.Errorf("open %s: %w", t.Name, err)
	}
	defer src.Close()
	var names []string
	if fl, ok := src.(connector.FieldLister); ok {
		if names, err = fl.Fields(ctx); err != nil {
			return fmt.Errorf("fields of %s: %w", t.Name, err)
		}
	}
	var labels map[string]string
	if fd, ok := src.(connector.FieldDescriber); ok {
		if labels, err = fd.FieldNames(ctx); err != nil {
			return fmt.Errorf("field names of %s: %w", t.Name, err)
		}
	}
	samples := map[string][]string{}
	err = src.Snapshot(ctx, func(_ context.Context, b connector.Batch) error {
		for _, r := range b.Records {
			if r.Invalid != nil || r.Deleted {
				continue
			}
			in.src.Records++
			for k, v := range r.Fields {
				if s := sampleString(v); s != "" {
					samples[k] = append(samples[k], s)
				}
				if len(names) == 0 || !contains(names, k) {
					names = append(names, k)
				}
			}
			if in.src.Records >= in.req.Samples {
				return errEnough
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return fmt.Errorf("read %s: %w", t.Name, err)
	}
	for _, n := range names {
		f := in.types[n]
		f.Name, f.Label, f.Samples = n, labels[n], samples[n]
		in.src.Fields = append(in.src.Fields, f)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sampleString is a record value as text, "" for none.
func sampleString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.Format(time.RFC3339)
	case []string:
		return strings.Join(x, ";")
	}
	return fmt.Sprint(v)
}
