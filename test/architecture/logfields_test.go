package architecture

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// literalField is a log field named by a string literal instead of a
// constant of internal/logfield.
var literalField = regexp.MustCompile(`WithField\("|(logrus\.Fields|map\[string\]any)\{\s*"[a-z_A-Z]+":`)

// TestLogFieldsAreConstants keeps log field names in one place: shipped
// code names every field through internal/logfield, so that one thing is
// logged under one name everywhere.
func TestLogFieldsAreConstants(t *testing.T) {
	out, err := exec.Command("git", "-C", "../..", "ls-files", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "deploy/") || strings.Contains(f, "test/") {
			continue
		}
		data, err := os.ReadFile("../../" + f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if literalField.MatchString(line) && (strings.Contains(line, "WithField") || strings.Contains(line, "logrus.Fields")) {
				t.Errorf("%s:%d names a log field by a literal: use a constant of internal/logfield\n\t%s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
