package progress

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// String is one line of the pass's figures: done of total, rate, time
// left, writes by kind, API calls. The health page and `syncd status`
// show it.
func (s Snapshot) String() string {
	var parts []string
	if s.Reason != "" {
		parts = append(parts, s.Reason)
	}
	switch {
	case s.Total == nil:
		parts = append(parts, Thousands(s.Done)+" records, total unknown")
	default:
		about := ""
		if s.TotalIsEstimate {
			about = "about "
		}
		f, _ := s.Fraction()
		parts = append(parts, fmt.Sprintf("%s of %s%s records (%d%%)", Thousands(s.Done), about, Thousands(*s.Total), int(f*100)))
	}
	parts = append(parts, fmt.Sprintf("%.1f records/s", s.RatePerSecond))
	if eta, ok := s.ETA(); ok {
		parts = append(parts, "about "+eta.Round(time.Second).String()+" left")
	} else {
		parts = append(parts, "time left unknown")
	}
	if w := s.WritesText(); w != "" {
		parts = append(parts, w)
	}
	parts = append(parts, Thousands(s.APICalls)+" API calls")
	return strings.Join(parts, " · ")
}

// WriteKinds are the kinds of writes, in the order they are shown.
var WriteKinds = []string{"created", "updated", "adopted", "deleted", "unlinked", "held", "failed", "unchanged"}

// WritesText lists the writes by kind in WriteKinds order, leaving out
// kinds with none: "created 12, updated 3".
func (s Snapshot) WritesText() string {
	var parts []string
	for _, k := range WriteKinds {
		if n := s.Writes[k]; n > 0 {
			parts = append(parts, k+" "+Thousands(n))
		}
	}
	return strings.Join(parts, ", ")
}

// Thousands formats n with separators: 12,345.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
