package connector

// Secret is a setting that never prints: fmt, logs, YAML and JSON show
// "[redacted]". Reveal returns the value. Connectors type their tokens
// and passwords with it so that a dumped Settings value shows none.
type Secret string

// String implements fmt.Stringer.
func (Secret) String() string { return "[redacted]" }

// GoString implements fmt.GoStringer, for %#v.
func (Secret) GoString() string { return `"[redacted]"` }

// MarshalJSON keeps the secret out of JSON dumps.
func (Secret) MarshalJSON() ([]byte, error) { return []byte(`"[redacted]"`), nil }

// MarshalText keeps the secret out of text encodings.
func (Secret) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }
