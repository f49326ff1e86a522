package mapping

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/syncd-io/syncd/workspace"
)

// The workspace's rules for a contact's source, from the API spec and the
// settled facts: a few reserved words, the names of other integrations,
// and two reserved prefixes. This is the one list syncd checks against
// (the emulator keeps its own copy, to play the service's part).
var (
	reservedSources = map[string]bool{
		"device":        true,
		"csv":           true,
		"other":         true,
		"openphone":     true, // the service's own name
		"zapier":        true,
		"google-people": true,
	}
	reservedSourcePrefixes = []string{"openphone", "csv"}
)

// ValidateSource reports why the workspace would refuse s as the source of
// a contact it creates, or nil. The comparison ignores case, since the
// service's does not promise to respect it.
func ValidateSource(s string) error {
	n := utf8.RuneCountInString(s)
	if n < 1 || n > workspace.MaxSourceLenCreate {
		return fmt.Errorf("source must be 1 to %d characters long, not %d", workspace.MaxSourceLenCreate, n)
	}
	l := strings.ToLower(s)
	if reservedSources[l] {
		return fmt.Errorf("source %q is reserved by the workspace", s)
	}
	for _, p := range reservedSourcePrefixes {
		if strings.HasPrefix(l, p) {
			return fmt.Errorf("source %q is reserved by the workspace (it starts with %q)", s, p)
		}
	}
	return nil
}
