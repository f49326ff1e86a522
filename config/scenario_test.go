package config

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scenario is a file of testdata/: a configuration whose header comments
// give the environment ("# env: NAME=value") and every problem expected
// ("# want: path: message", a prefix of the problem's text). A file
// without wants must be valid.
type scenario struct {
	env  map[string]string
	want []string
}

func readScenario(t *testing.T, data []byte) scenario {
	t.Helper()
	sc := scenario{env: map[string]string{}}
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		line := s.Text()
		if v, ok := strings.CutPrefix(line, "# env: "); ok {
			name, val, _ := strings.Cut(v, "=")
			sc.env[name] = val
		}
		if v, ok := strings.CutPrefix(line, "# want: "); ok {
			sc.want = append(sc.want, v)
		}
	}
	return sc
}

func (sc scenario) getenv(name string) string { return sc.env[name] }

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("scenario files: %v, %v", files, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sc := readScenario(t, data)
			c, err := ParseConfig(data, sc.getenv)
			if len(sc.want) == 0 {
				if err != nil {
					t.Fatalf("want a valid configuration, got:\n%v", err)
				}
				if c == nil || len(c.Connectors) == 0 {
					t.Fatal("no connectors decoded")
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want a *ValidationError", err)
			}
			if c != nil {
				t.Error("a Config was returned with problems")
			}
			matched := make([]bool, len(ve.Problems))
			for _, w := range sc.want {
				found := false
				for i, p := range ve.Problems {
					if !matched[i] && strings.HasPrefix(p.Path+": "+p.Message+"; "+p.Hint, w) || !matched[i] && p.Path == "" && strings.HasPrefix(p.Message, w) {
						matched[i], found = true, true
						break
					}
				}
				if !found {
					t.Errorf("missing problem %q", w)
				}
			}
			for i, p := range ve.Problems {
				if !matched[i] {
					t.Errorf("unexpected problem %q", p)
				}
				if p.Hint == "" {
					t.Errorf("problem %q has no hint", p)
				}
			}
			if t.Failed() {
				t.Logf("all problems:\n%v", err)
			}
		})
	}
}
