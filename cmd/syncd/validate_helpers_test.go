package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wantLines fails the test for each of want that out lacks; what names
// the output ("stderr").
func wantLines(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// wantInvalid writes yaml as syncd.yaml in a fresh directory and checks
// that validate refuses it with n problems, each of want among them on
// stderr. It returns the file's path.
func wantInvalid(t *testing.T, yaml string, n int, want ...string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "syncd.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	_, serr, err := runMain(t, "validate", "--config", cfg)
	var ie *InvalidConfigError
	if !errors.As(err, &ie) || ie.Problems != n {
		t.Fatalf("err = %v, want %d problems\n%s", err, n, serr)
	}
	wantLines(t, "stderr", serr, want...)
	return cfg
}
