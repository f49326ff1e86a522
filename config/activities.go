package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/policy"
)

// ActivitiesConfig is a connector's logging of the workspace's calls and
// texts on its records (package activity). Off unless log lists a kind.
type ActivitiesConfig struct {
	// Log lists what is logged: calls, messages, and in a call's
	// activity its summaries, transcripts and recordings.
	Log []policy.ActivityLog `yaml:"log"`
	// UnknownNumbers is what a call or text with a number no link of the
	// connector knows does: skip (counted) or create (a record with the
	// number, linked to a new contact by the forward pass, then the
	// activity on it).
	UnknownNumbers policy.UnknownNumbers `yaml:"unknownNumbers"`
	// Table and Mapping say where a database connector writes
	// activities: the table, and the column of each activity field
	// (activitytable.go).
	Table   string            `yaml:"table"`
	Mapping map[string]string `yaml:"mapping"`
}

// Enabled reports whether the connector logs anything.
func (a ActivitiesConfig) Enabled() bool { return len(a.Log) > 0 }

// Logs reports whether log lists k.
func (a ActivitiesConfig) Logs(k policy.ActivityLog) bool { return slices.Contains(a.Log, k) }

// ActivityTypes returns the registered connector types that can log
// activities, sorted.
func ActivityTypes() []string {
	var out []string
	for _, name := range connector.Types() {
		if t, _ := connector.Lookup(name); t.Has(connector.CapActivities) {
			out = append(out, name)
		}
	}
	return out
}

// validateActivities checks a connector's activities block; typ is nil
// when the type is unknown (reported elsewhere).
func (cc *ConnectorConfig) validateActivities(ps *problems, path string, typ *connector.Type) {
	a := cc.Activities
	p := join(path, "activities")
	seen := map[policy.ActivityLog]bool{}
	for i, k := range a.Log {
		kp := fmt.Sprintf("%s[%d]", join(p, "log"), i)
		switch {
		case !k.Valid():
			ps.add(kp, allowedHint(k.Allowed()), "unknown value %q", k.String())
		case seen[k]:
			ps.add(kp, "list each kind once", "%s is listed twice", k)
		}
		seen[k] = true
	}
	if !a.UnknownNumbers.Valid() {
		ps.add(join(p, "unknownNumbers"), allowedHint(a.UnknownNumbers.Allowed()), "unknown value %q", a.UnknownNumbers.String())
	}
	if !a.Enabled() {
		return
	}
	for _, k := range []policy.ActivityLog{policy.LogSummaries, policy.LogTranscripts, policy.LogRecordings} {
		if seen[k] && !seen[policy.LogCalls] {
			ps.add(join(p, "log"), "add calls to log: a call's "+string(k)+" go into its activity", "%s without calls", k)
		}
	}
	phone := false
	for target := range cc.Mapping.Fields {
		phone = phone || strings.HasPrefix(target, "phoneNumbers.")
	}
	if !phone {
		ps.add(join(p, "log"), "map the record's phone to a phoneNumbers.<label> field: activities find their record by the other party's number",
			"no phoneNumbers.* field is mapped")
	}
	if typ == nil {
		return
	}
	if !typ.Has(connector.CapActivities) {
		why := "it has no activity timeline syncd can write"
		if !typ.Writable {
			why = "it is a read-only source"
		}
		ps.add(join(p, "log"), "remove activities from this connector; types that can log calls and texts: "+strings.Join(ActivityTypes(), ", "),
			"%s cannot log calls or texts: %s", typ.Name, why)
		return
	}
	cc.validateActivityTable(ps, p, typ)
	if a.UnknownNumbers == policy.UnknownCreate {
		cc.validateCreate(ps, join(p, "unknownNumbers"), typ)
	}
}

// validateCreate checks what unknownNumbers: create needs: a connector
// that writes records, and a phone number field that flows back to it
// (the new record carries the number; the forward pass then links it).
func (cc *ConnectorConfig) validateCreate(ps *problems, path string, typ *connector.Type) {
	if !typ.Writable {
		ps.add(path, "use unknownNumbers: skip", "%s is read-only: it cannot create records", typ.Name)
		return
	}
	if !cc.Direction.WritesBack() {
		ps.add(path, "set direction: both, or unknownNumbers: skip", "create writes records, which direction: %s does not", cc.Direction)
		return
	}
	m, err := mapping.Compile(cc.Mapping, cc.Direction, nil)
	if err != nil {
		return // reported with the mapping
	}
	for _, t := range m.ReverseTargets() {
		if strings.HasPrefix(t, "phoneNumbers.") {
			return
		}
	}
	ps.add(path, "let a phoneNumbers.<label> field flow back to the record (not direction: to-workspace on it), or use unknownNumbers: skip",
		"no phone number field flows back: a created record would not carry the number")
}
