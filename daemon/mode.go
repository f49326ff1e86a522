package daemon

import (
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// Mode says how the connector learns of changes, for `syncd status`,
// /status and the health page: its source's notifications, if any, and
// its schedule, which always runs as a safety net ("poll every 5m",
// "file watch + poll every 5m", "webhooks + poll every 1h").
func (c *Connector) Mode() string {
	poll := PollMode(c.schedule)
	if n, ok := c.Source.(connector.ChangeNotifier); ok {
		// "" (and "none ...") is a source whose settings notify nothing.
		if m := n.NotifyMode(); m != "" && !strings.HasPrefix(m, "none") {
			return m + " + " + poll
		}
	}
	return poll
}

// PollMode describes a connector's schedule: "poll every 5m" for
// "@every 5m" (and the cron descriptors @hourly, @daily), else "poll on
// schedule <spec>".
func PollMode(spec string) string {
	named := map[string]string{"@hourly": "1h", "@daily": "24h", "@midnight": "24h", "@weekly": "168h"}
	if d, ok := named[spec]; ok {
		return "poll every " + d
	}
	if s, ok := strings.CutPrefix(spec, "@every "); ok {
		if d, err := time.ParseDuration(strings.TrimSpace(s)); err == nil {
			return "poll every " + shortDuration(d)
		}
	}
	return "poll on schedule " + spec
}

// shortDuration writes 5m for 5m0s and 1h for 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
