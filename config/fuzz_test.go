package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseConfig feeds the parser any text, with every variable set to
// a secret: it never panics, every failure is a *ValidationError whose
// problems all have a path or message and a hint and never show the
// secret, and what it accepts validates and summarises without it.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	const secret = "FUZZ-SECRET-VALUE"
	getenv := func(string) string { return secret }
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data, getenv)
		leakable := !strings.Contains(string(data), secret[:8])
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Problems) == 0 {
				t.Fatalf("err = %v (%T), want a *ValidationError", err, err)
			}
			for _, p := range ve.Problems {
				if p.Message == "" || p.Hint == "" {
					t.Fatalf("problem without message or hint: %#v", p)
				}
			}
			if leakable && strings.Contains(err.Error(), secret) {
				t.Fatalf("the secret shows in:\n%v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted, then Validate: %v", err)
		}
		if s := c.Redacted(); leakable && strings.Contains(s, secret) {
			t.Fatalf("the secret shows in the summary:\n%s", s)
		}
	})
}
