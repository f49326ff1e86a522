package config

import (
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strings"

	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/workspace"
)

// secretWords mark keys whose values are secrets wherever they appear
// (connector settings included): a key equal to one, or ending in one.
var secretWords = []string{"apikey", "token", "password", "secret", "dsn", "credentials", "privatekey"}

// IsSecretKey reports whether a key's value must never be printed.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range secretWords {
		if strings.HasSuffix(k, w) {
			return true
		}
	}
	return false
}

// redactURL keeps a URL's scheme, host and path: user info and query may
// hold credentials.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "..."
	}
	u.Fragment = ""
	return u.String()
}

func setOrNot(s string) string {
	if s == "" {
		return "not set"
	}
	return "set"
}

// Redacted returns a summary of the configuration that is safe to print:
// secrets show only whether they are set, URLs lose their user info and
// query.
func (c *Config) Redacted() string {
	var b strings.Builder
	w := c.Workspace
	fmt.Fprintf(&b, "workspace: %s (%s: %s), %v requests/s, burst %d, apiKey %s\n",
		redactURL(w.BaseURL), w.VersionHeader, w.Version, w.RateLimit, w.Burst, setOrNot(w.APIKey))
	fmt.Fprintf(&b, "workspace custom field values: %s\n", valueFormHelp(w.CustomFieldValues))
	fmt.Fprintf(&b, "state: %s\n", c.State.Path)
	wh := c.Webhooks
	if wh.Listen == "" {
		b.WriteString("webhooks: no receiver\n")
	} else {
		fmt.Fprintf(&b, "webhooks: listen %s%s", wh.Listen, wh.Path)
		if wh.PublicURL != "" {
			fmt.Fprintf(&b, ", public %s", redactURL(wh.PublicURL))
		}
		fmt.Fprintf(&b, ", autoRegister %v, secretGrace %s, legacySignatures %v, maxBodyBytes %d\n",
			wh.AutoRegister, wh.SecretGrace, wh.LegacySignatures, wh.MaxBodyBytes)
	}
	if c.Admin.Listen == "" {
		b.WriteString("admin: off\n")
	} else {
		fmt.Fprintf(&b, "admin: listen %s, token %s\n", c.Admin.Listen, setOrNot(c.Admin.Token))
	}
	fmt.Fprintf(&b, "log: %s, %s\n", c.Log.Level, c.Log.Format)
	fmt.Fprintf(&b, "connectors: %d\n", len(c.Connectors))
	for _, cc := range c.Connectors {
		fmt.Fprintf(&b, "  %s: type %s, source %s, schedule %q, direction %s\n", cc.Name, cc.Type, cc.Source, cc.Schedule, cc.Direction)
		fmt.Fprintf(&b, "    policies: conflict %s, onSourceDelete %s, onWorkspaceDelete %s, onWorkspaceCreate %s\n",
			cc.Conflict, cc.OnSourceDelete, cc.OnWorkspaceDelete, cc.OnWorkspaceCreate)
		if len(cc.Match) > 0 {
			fmt.Fprintf(&b, "    match: %s, onMatch %s, onAmbiguous %s\n", strings.Join(cc.Match, ", "), cc.OnMatch, cc.OnAmbiguous)
		}
		fmt.Fprintf(&b, "    batchSize %d, workers %d, massDeleteThreshold %v, massRekeyThreshold %v\n", cc.BatchSize, cc.Workers, cc.MassDeleteThreshold, cc.MassRekeyThreshold)
		if s := settingsSummary(cc.Settings); s != "" {
			fmt.Fprintf(&b, "    settings: %s\n", s)
		}
		ext := cc.Mapping.ExternalID
		if ext == "" {
			ext = "(record id)"
		}
		fmt.Fprintf(&b, "    externalId <- %s\n", ext)
		if m, err := mapping.Compile(cc.Mapping, cc.Direction, nil); err == nil {
			for _, line := range m.Describe() {
				fmt.Fprintf(&b, "    %s\n", line)
			}
		}
	}
	return b.String()
}

// settingsSummary prints a settings struct's fields by YAML key, secrets
// as set or not set.
func settingsSummary(s any) string {
	v := reflect.ValueOf(s)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	var parts []string
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fv := v.Field(i)
		for fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				break
			}
			fv = fv.Elem()
		}
		var val string
		switch {
		case IsSecretKey(name):
			val = "(" + setOrNot(nonEmpty(fv)) + ")"
		case fv.Kind() == reflect.Pointer:
			continue // unset optional value
		case fv.Kind() == reflect.String:
			val = fmt.Sprintf("%q", redactIfURL(fv.String()))
		default:
			val = fmt.Sprint(fv.Interface())
		}
		parts = append(parts, name+"="+val)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

func nonEmpty(v reflect.Value) string {
	if v.IsZero() {
		return ""
	}
	return "x"
}

// redactIfURL hides credentials of a value that looks like a URL.
func redactIfURL(s string) string {
	if strings.Contains(s, "://") {
		return redactURL(s)
	}
	return s
}

// valueFormHelp says what a custom field value form sends.
func valueFormHelp(form string) string {
	switch form {
	case workspace.ValuesTyped:
		return "typed (booleans, numbers, date-times, strings, arrays for multi-select; null clears)"
	case workspace.ValuesArrays:
		return "arrays (every value an array of strings; [] clears)"
	}
	return form
}
