package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
	"github.com/syncd-io/syncd/workspace"
)

var (
	connectorName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	headerName    = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`)
)

// Limits of numeric settings.
const (
	MaxBatchSize = 10000
	MaxWorkers   = 64
)

// Validate checks a decoded configuration and returns a *ValidationError
// listing every problem, or nil.
func (c *Config) Validate() error {
	var ps problems
	c.validateWorkspace(&ps)
	c.validateServers(&ps)
	names := map[string]int{}
	sources := map[string]string{}
	if len(c.Connectors) == 0 {
		ps.add("connectors", "add a connector, for example one of type csv (see config.example.yaml)", "no connectors")
	}
	for i := range c.Connectors {
		cc := &c.Connectors[i]
		path := connectorPath(i, cc.Name)
		if j, dup := names[cc.Name]; dup && cc.Name != "" {
			ps.add(join(path, "name"), "give each connector its own name", "connectors %d and %d are both named %q", j, i, cc.Name)
		}
		names[cc.Name] = i
		if other, dup := sources[strings.ToLower(cc.Source)]; dup && cc.Source != "" {
			ps.add(join(path, "source"), "give each connector its own source: contacts are told apart by it", "source %q is also used by connector %s", cc.Source, other)
		} else {
			sources[strings.ToLower(cc.Source)] = cc.Name
		}
		cc.validate(&ps, path)
	}
	return ps.err()
}

func (c *Config) validateWorkspace(ps *problems) {
	w := c.Workspace
	if w.BaseURL == "" {
		ps.add("workspace.baseURL", "set it to the API's address, such as https://api.example.com", "required")
	} else if err := checkURL(w.BaseURL); err != nil {
		ps.add("workspace.baseURL", "write an absolute http or https URL, such as https://api.example.com", "%v", err)
	}
	if w.APIKey == "" {
		ps.add("workspace.apiKey", "write apiKey: ${WORKSPACE_API_KEY} and export the key", "required")
	}
	if !headerName.MatchString(w.VersionHeader) {
		ps.add("workspace.versionHeader", "use an HTTP header name such as Service-Api-Version", "invalid header name %q", w.VersionHeader)
	}
	if strings.TrimSpace(w.Version) == "" {
		ps.add("workspace.version", "set the API version, such as \"2026-03-30\" (quoted)", "required")
	}
	if w.RateLimit <= 0 {
		ps.add("workspace.rateLimit", "the public service allows 10 requests per second per key", "must be above 0, not %v", w.RateLimit)
	}
	if w.Burst < 1 {
		ps.add("workspace.burst", "use at least 1; the default is 10", "must be at least 1, not %d", w.Burst)
	}
	if !workspace.ValidValueForm(w.CustomFieldValues) {
		ps.add("workspace.customFieldValues", "use typed (values typed by their field's type, the default) or arrays (every value an array of strings)",
			"unknown form %q", w.CustomFieldValues)
	}
	if strings.TrimSpace(c.State.Path) == "" {
		ps.add("state.path", "name the state file, such as ./syncd.db", "required")
	}
}

func (c *Config) validateServers(ps *problems) {
	wh := c.Webhooks
	reads := ""
	for _, cc := range c.Connectors {
		if cc.ReadsWorkspace() || cc.Activities.Enabled() {
			reads = cc.Name
			break
		}
	}
	if wh.Listen != "" {
		if err := checkListen(wh.Listen); err != nil {
			ps.add("webhooks.listen", "write host:port, such as 127.0.0.1:8080 or :8080", "%v", err)
		}
	} else if wh.AutoRegister && reads != "" {
		ps.add("webhooks.listen", "set the address the receiver listens on, such as 127.0.0.1:8080", "required with autoRegister: true")
	}
	if !strings.HasPrefix(wh.Path, "/") {
		ps.add("webhooks.path", "write a path such as /webhooks/workspace", "must start with /, not %q", wh.Path)
	}
	if wh.PublicURL != "" {
		if err := checkURL(wh.PublicURL); err != nil {
			ps.add("webhooks.publicURL", "write the https URL the workspace can reach this receiver at", "%v", err)
		}
	} else if wh.AutoRegister && reads != "" {
		ps.add("webhooks.publicURL", "set the https URL the workspace delivers to, or set autoRegister: false and run syncd webhooks register yourself",
			"required: connector %s reads changes from the workspace and autoRegister is true", reads)
	}
	if wh.SecretGrace < 0 {
		ps.add("webhooks.secretGrace", "use a duration such as 24h, or 0 to drop old secrets at once", "must not be negative")
	}
	if wh.MaxBodyBytes <= 0 {
		ps.add("webhooks.maxBodyBytes", "the default is 1048576 (1 MiB)", "must be above 0")
	}

	if a := c.Admin; a.Listen != "" {
		if err := checkListen(a.Listen); err != nil {
			ps.add("admin.listen", "write host:port, such as 127.0.0.1:8081, or \"\" for no admin API", "%v", err)
		} else if host, _, _ := net.SplitHostPort(a.Listen); !isLoopback(host) && a.Token == "" {
			ps.add("admin.token", "set token: ${SYNCD_ADMIN_TOKEN}, or listen on 127.0.0.1 only",
				"required when the admin API listens beyond this machine (%s)", a.Listen)
		}
		if a.Listen == wh.Listen {
			ps.add("admin.listen", "give the admin API and the webhook receiver different ports", "same address as webhooks.listen")
		}
	}

	if _, err := logrus.ParseLevel(c.Log.Level); err != nil {
		ps.add("log.level", "use one of trace, debug, info, warn, error, fatal, panic", "unknown level %q", c.Log.Level)
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		ps.add("log.format", "use text or json", "unknown format %q", c.Log.Format)
	}
}

// validate checks one connector.
func (cc *ConnectorConfig) validate(ps *problems, path string) {
	p := func(key string) string { return join(path, key) }
	if cc.Name == "" {
		ps.add(p("name"), "name the connector, such as crm", "required")
	} else if !connectorName.MatchString(cc.Name) {
		ps.add(p("name"), "use lower-case letters, digits, - and _, starting with a letter or digit, at most 63", "invalid name %q", cc.Name)
	}
	typ, known := connector.Lookup(cc.Type)
	switch {
	case cc.Type == "":
		ps.add(p("type"), "set the type, one of: "+strings.Join(connector.Types(), ", "), "required")
	case !known:
		ps.add(p("type"), "use one of: "+strings.Join(connector.Types(), ", "), "unknown connector type %q", cc.Type)
	}
	if err := mapping.ValidateSource(cc.Source); err != nil {
		ps.add(p("source"), "use custom-<system>, such as custom-"+orDefault(cc.Name, "crm"), "%v", err)
	}
	if err := CheckSchedule(cc.Schedule); err != nil {
		ps.add(p("schedule"), `use a cron spec such as "*/5 * * * *", or a descriptor such as "@every 5m" or "@hourly"`, "invalid schedule %q: %v", cc.Schedule, err)
	}
	enum(ps, p("direction"), cc.Direction)
	enum(ps, p("conflict"), cc.Conflict)
	enum(ps, p("onSourceDelete"), cc.OnSourceDelete)
	enum(ps, p("onWorkspaceDelete"), cc.OnWorkspaceDelete)
	enum(ps, p("onWorkspaceCreate"), cc.OnWorkspaceCreate)
	enum(ps, p("editAfterDelete"), cc.EditAfterDelete)
	enum(ps, p("onMatch"), cc.OnMatch)
	enum(ps, p("onAmbiguous"), cc.OnAmbiguous)
	seen := map[string]bool{}
	for i, m := range cc.Match {
		mp := fmt.Sprintf("%s[%d]", p("match"), i)
		switch {
		case m != MatchPhone && m != MatchEmail:
			ps.add(mp, "match on phone, email or both: [phone, email]", "unknown match key %q", m)
		case seen[m]:
			ps.add(mp, "list each key once", "%s is listed twice", m)
		}
		seen[m] = true
	}
	if cc.BatchSize < 1 || cc.BatchSize > MaxBatchSize {
		ps.add(p("batchSize"), fmt.Sprintf("use 1 to %d; the default is %d", MaxBatchSize, DefaultBatchSize), "out of range: %d", cc.BatchSize)
	}
	if cc.Workers < 1 || cc.Workers > MaxWorkers {
		ps.add(p("workers"), fmt.Sprintf("use 1 to %d; the default is %d", MaxWorkers, DefaultWorkers), "out of range: %d", cc.Workers)
	}
	if !(cc.MassDeleteThreshold > 0 && cc.MassDeleteThreshold <= 1) {
		ps.add(p("massDeleteThreshold"), "use a share above 0 and at most 1, such as 0.10; 1 turns the guard off", "out of range: %v", cc.MassDeleteThreshold)
	}
	if !(cc.MassRekeyThreshold > 0 && cc.MassRekeyThreshold <= 1) {
		ps.add(p("massRekeyThreshold"), "use a share above 0 and at most 1, such as 0.10; 1 turns the guard off", "out of range: %v", cc.MassRekeyThreshold)
	}

	if known {
		cc.validateForType(ps, path, typ)
		cc.validateActivities(ps, path, &typ)
	} else {
		cc.validateActivities(ps, path, nil)
	}

	dir := cc.Direction
	if !dir.Valid() {
		dir = policy.Both // reported above; check the mapping as loosely as possible
	}
	if _, err := mapping.Compile(cc.Mapping, dir, nil); err != nil {
		var se *mapping.SpecError
		if !errors.As(err, &se) {
			se = &mapping.SpecError{Problems: []mapping.Problem{{Message: err.Error(), Hint: "fix the mapping"}}}
		}
		for _, mp := range se.Problems {
			*ps = append(*ps, Problem{Path: join(p("mapping"), mp.Path), Message: mp.Message, Hint: mp.Hint})
		}
	}
}

// validateForType checks what depends on the connector's type.
func (cc *ConnectorConfig) validateForType(ps *problems, path string, typ connector.Type) {
	p := func(key string) string { return join(path, key) }
	if !typ.Writable {
		if cc.Direction.WritesBack() {
			ps.add(p("direction"), "use direction: to-workspace", "%s is read-only", typ.Name)
		}
		if cc.OnWorkspaceCreate == policy.CreateRecord {
			ps.add(p("onWorkspaceCreate"), "use onWorkspaceCreate: ignore", "%s is read-only: it cannot create records", typ.Name)
		}
		if cc.OnWorkspaceDelete == policy.DeleteRemove {
			ps.add(p("onWorkspaceDelete"), "use ignore or unlink", "%s is read-only: it cannot delete records", typ.Name)
		}
	} else {
		if cc.OnWorkspaceCreate == policy.CreateRecord && cc.Direction == policy.ToWorkspace {
			ps.add(p("onWorkspaceCreate"), "set direction: both, or onWorkspaceCreate: ignore", "create writes records back, which direction: to-workspace does not")
		}
		if cc.OnWorkspaceDelete == policy.DeleteRemove && cc.Direction == policy.ToWorkspace {
			ps.add(p("onWorkspaceDelete"), "set direction: both, or use ignore or unlink", "delete writes back, which direction: to-workspace does not")
		}
	}
	s := cc.Settings
	if s == nil {
		s = typ.NewSettings()
	}
	for _, err := range s.Validate() {
		key, msg, ok := strings.Cut(err.Error(), ": ")
		sp := join(path, "settings")
		if ok && !strings.ContainsAny(key, " \t") {
			sp = join(sp, key)
		} else {
			msg = err.Error()
		}
		ps.add(sp, "see the "+typ.Name+" settings in config.example.yaml", "%s", msg)
	}
}

// policyValue is a connector policy of package policy.
type policyValue interface {
	String() string
	Valid() bool
	Allowed() []string
}

// enum reports a policy that holds none of its allowed values (decoding
// keeps the text as written, and reports it first).
func enum(ps *problems, path string, v policyValue) {
	if !v.Valid() {
		ps.add(path, allowedHint(v.Allowed()), "unknown value %q", v.String())
	}
}

func allowedHint(allowed []string) string { return "use one of: " + strings.Join(allowed, ", ") }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// checkURL accepts absolute http and https URLs.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return errors.New("invalid URL")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("not an absolute http or https URL: %q", redactURL(s))
	}
	return nil
}

// checkListen accepts host:port with a numeric port.
func checkListen(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("invalid address %q", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("invalid port in %q", s)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
