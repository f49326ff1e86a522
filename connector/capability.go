package connector

import (
	"slices"
	"strings"
)

// Capability names an optional interface that a connector's Source may
// implement beyond Source (and Writer, which Type.Writable declares).
// Each connector type declares its capabilities in Type.Capabilities, in
// the one place it registers; the contract suite (connectortest) opens
// the connector and fails when what it implements differs from what it
// declares, and docs/CONNECTORS.md's table is checked against the
// declarations, so neither can drift.
type Capability string

// The capabilities, one per optional interface.
const (
	// CapGet: Getter, reads records by ID (the reverse direction reads
	// before it writes; a long forward pass re-reads written-back records).
	CapGet Capability = "get"
	// CapCount: Counter, says cheaply how many records a read delivers.
	CapCount Capability = "count"
	// CapReestimate: Reestimator, refines an estimated count as it reads.
	CapReestimate Capability = "reestimate"
	// CapFields: FieldLister, names the fields records carry (validate).
	CapFields Capability = "fields"
	// CapFieldNames: FieldDescriber, display names of keyed fields.
	CapFieldNames Capability = "field-names"
	// CapWritableFields: WritableFieldLister, the fields a write may set.
	CapWritableFields Capability = "writable-fields"
	// CapQuota: QuotaReporter, the system's API allowance as last seen.
	CapQuota Capability = "quota"
	// CapNotify: ChangeNotifier, says when there are changes to read
	// (a pass starts at once instead of at the next schedule).
	CapNotify Capability = "notify"
	// CapSurvivor: SurvivorFinder, names the record a merged-away record
	// was merged into when the system's reads leave no trace of it.
	CapSurvivor Capability = "survivor"
	// CapWebhook: WebhookSource, takes the system's change webhooks on
	// the daemon's listener (a verified one starts a pass) and registers
	// them where the system's API allows.
	CapWebhook Capability = "webhook"
	// CapActivities: ActivityWriter, logs the workspace's calls and texts
	// on the system's records (a connector's `activities:` settings).
	CapActivities Capability = "activities"
	// CapPollTable: TablePoller, says whether it reads a SQL table by
	// polling, whose changes the daemon then also reads between passes
	// to keep each value's time (reconcile.Observer).
	CapPollTable Capability = "poll-table"
)

// capabilities maps each capability to its interface's test, in the
// order the documentation lists them.
var capabilities = []struct {
	c    Capability
	is   func(Source) bool
	what string
}{
	{CapGet, func(s Source) bool { _, ok := s.(Getter); return ok }, "Getter"},
	{CapCount, func(s Source) bool { _, ok := s.(Counter); return ok }, "Counter"},
	{CapReestimate, func(s Source) bool { _, ok := s.(Reestimator); return ok }, "Reestimator"},
	{CapFields, func(s Source) bool { _, ok := s.(FieldLister); return ok }, "FieldLister"},
	{CapFieldNames, func(s Source) bool { _, ok := s.(FieldDescriber); return ok }, "FieldDescriber"},
	{CapWritableFields, func(s Source) bool { _, ok := s.(WritableFieldLister); return ok }, "WritableFieldLister"},
	{CapQuota, func(s Source) bool { _, ok := s.(QuotaReporter); return ok }, "QuotaReporter"},
	{CapNotify, func(s Source) bool { _, ok := s.(ChangeNotifier); return ok }, "ChangeNotifier"},
	{CapSurvivor, func(s Source) bool { _, ok := s.(SurvivorFinder); return ok }, "SurvivorFinder"},
	{CapWebhook, func(s Source) bool { _, ok := s.(WebhookSource); return ok }, "WebhookSource"},
	{CapActivities, func(s Source) bool { _, ok := s.(ActivityWriter); return ok }, "ActivityWriter"},
	{CapPollTable, func(s Source) bool { _, ok := s.(TablePoller); return ok }, "TablePoller"},
}

// Capabilities returns every capability, in the documentation's order.
func Capabilities() []Capability {
	all := make([]Capability, len(capabilities))
	for i, c := range capabilities {
		all[i] = c.c
	}
	return all
}

// Interface returns the name of the interface behind c ("Getter"), or "".
func (c Capability) Interface() string {
	for _, k := range capabilities {
		if k.c == c {
			return k.what
		}
	}
	return ""
}

// Implemented returns the capabilities src implements, in the
// documentation's order.
func Implemented(src Source) []Capability {
	var got []Capability
	for _, c := range capabilities {
		if c.is(src) {
			got = append(got, c.c)
		}
	}
	return got
}

// Has reports whether t declares c.
func (t Type) Has(c Capability) bool { return slices.Contains(t.Capabilities, c) }

// CheckCapabilities compares what src implements with what t declares and
// returns a description of the difference, or "".
func (t Type) CheckCapabilities(src Source) string {
	var problems []string
	for _, c := range capabilities {
		switch declared, is := t.Has(c.c), c.is(src); {
		case declared && !is:
			problems = append(problems, string(c.c)+" is declared but the source is no "+c.what)
		case !declared && is:
			problems = append(problems, "the source is a "+c.what+" but "+string(c.c)+" is not declared")
		}
	}
	for _, c := range t.Capabilities {
		if c.Interface() == "" {
			problems = append(problems, "unknown capability "+string(c))
		}
	}
	return strings.Join(problems, "; ")
}
