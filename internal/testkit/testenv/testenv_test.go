package testenv

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that records a Fatalf instead of stopping.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.fatal = fmt.Sprintf(format, args...) }

func TestRequire(t *testing.T) {
	t.Setenv("SYNCD_TESTENV_SET", "value")
	if v := Require(t, "SYNCD_TESTENV_SET", "anything"); v != "value" {
		t.Errorf("Require = %q, want value", v)
	}
	t.Setenv("SYNCD_TESTENV_EMPTY", "")
	r := &recorder{TB: t}
	Require(r, "SYNCD_TESTENV_EMPTY", "point it at a folder")
	if r.fatal != "SYNCD_TESTENV_EMPTY is not set: point it at a folder" {
		t.Errorf("failure %q", r.fatal)
	}
}
