package crash

import (
	"os"
	"strings"
)

// removeState deletes the state file named in the configuration.
func removeState(cfgPath string) error {
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "path: "); ok && strings.HasSuffix(p, ".db") {
			return os.Remove(p)
		}
	}
	return os.ErrNotExist
}
