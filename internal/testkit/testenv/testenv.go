// Package testenv reads the environment variables that the tests against
// real accounts and official client libraries need (build tags
// integration, npmclient, jsforce). A test never skips silently: an unset
// variable fails it, saying how to set it.
package testenv

import (
	"os"
	"testing"
)

// Require returns the value of the environment variable key, and fails
// the test when it is unset or empty; how says what to set it to.
func Require(t testing.TB, key, how string) string {
	t.Helper()
	v := os.Getenv(key)
	if v == "" {
		t.Fatalf("%s is not set: %s", key, how)
	}
	return v
}
