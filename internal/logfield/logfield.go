// Package logfield names the fields of syncd's log lines, in one place,
// so that one thing is logged under one name everywhere (a workspace
// contact is always "contact", a record's id in its own system always
// "record"). Messages are fixed strings; what varies goes in these fields.
package logfield

// The field names, sorted.
const (
	// Action is the field "action".
	Action = "action"
	// Address is the field "address".
	Address = "address"
	// Adopted is the field "adopted".
	Adopted = "adopted"
	// API is the field "api".
	API = "api"
	// APICalls is the field "api_calls".
	APICalls = "api_calls"
	// Archived is the field "archived".
	Archived = "archived"
	// Asked is the field "asked".
	Asked = "asked"
	// Attempt is the field "attempt".
	Attempt = "attempt"
	// Batches is the field "batches".
	Batches = "batches"
	// Bytes is the field "bytes".
	Bytes = "bytes"
	// Changed is the field "changed".
	Changed = "changed"
	// Checkpoint is the field "checkpoint".
	Checkpoint = "checkpoint"
	// Component is the part of syncd that logs: workspace, webhook, applier....
	Component = "component"
	// Configured is the field "configured".
	Configured = "configured"
	// Connector is the connector's name.
	Connector = "connector"
	// Connectors is the field "connectors".
	Connectors = "connectors"
	// Contact is a workspace contact's id.
	Contact = "contact"
	// Contacts is the field "contacts".
	Contacts = "contacts"
	// Created is the field "created".
	Created = "created"
	// CustomFieldValues is the field "custom_field_values".
	CustomFieldValues = "custom_field_values"
	// CustomFields is the field "custom_fields".
	CustomFields = "custom_fields"
	// DeadLetter is the field "dead_letter".
	DeadLetter = "dead_letter"
	// Delay is the field "delay".
	Delay = "delay"
	// Deleted is the field "deleted".
	Deleted = "deleted"
	// DeletedWithinWindow is the field "deleted_within_window".
	DeletedWithinWindow = "deleted_within_window"
	// Done is the field "done".
	Done = "done"
	// Dropped is the field "dropped".
	Dropped = "dropped"
	// DryRun is the field "dry_run".
	DryRun = "dry_run"
	// DuplicateContact is a second contact found for the same record.
	DuplicateContact = "duplicate_contact"
	// Duplicates is the field "duplicates".
	Duplicates = "duplicates"
	// Duration is the field "duration".
	Duration = "duration"
	// End is the field "end".
	End = "end"
	// Error is the field "error".
	Error = "error"
	// Errors is the field "errors".
	Errors = "errors"
	// EtaSeconds is the field "eta_seconds".
	EtaSeconds = "eta_seconds"
	// Event is the field "event".
	Event = "event"
	// Events is the field "events".
	Events = "events"
	// ExternalID is a contact's externalId (the record's key in its source).
	ExternalID = "external_id"
	// Failed is the field "failed".
	Failed = "failed"
	// Failures is the field "failures".
	Failures = "failures"
	// Fault is the field "fault".
	Fault = "fault"
	// FaultRate is the field "fault_rate".
	FaultRate = "fault_rate"
	// Field is the field "field".
	Field = "field"
	// Form is the field "form".
	Form = "form"
	// From is the field "from".
	From = "from"
	// Held is the field "held".
	Held = "held"
	// Inputs is the field "inputs".
	Inputs = "inputs"
	// Instance is the field "instance".
	Instance = "instance"
	// Instead is the field "instead".
	Instead = "instead"
	// Invalid is the field "invalid".
	Invalid = "invalid"
	// Key is the field "key".
	Key = "key"
	// Kind is the kind of a pass: run, resync, retry.
	Kind = "kind"
	// Linked is the field "linked".
	Linked = "linked"
	// LinkedContact is the contact a record stays linked to.
	LinkedContact = "linked_contact"
	// Lsn is the field "lsn".
	Lsn = "lsn"
	// Mapping is the field "mapping".
	Mapping = "mapping"
	// MergedInto is the field "merged_into".
	MergedInto = "merged_into"
	// Missing is the field "missing".
	Missing = "missing"
	// Live is the field "live".
	Live = "live"
	// Mode is the field "mode".
	Mode = "mode"
	// New is the field "new".
	New = "new"
	// NewRecords is the field "new_records".
	NewRecords = "new_records"
	// OfLast is the field "of_last".
	OfLast = "of_last"
	// Operation is a write's operation: create, update, delete, read.
	Operation = "operation"
	// Pages is the field "pages".
	Pages = "pages"
	// Path is the field "path".
	Path = "path"
	// Permanent is the field "permanent".
	Permanent = "permanent"
	// Phase is the field "phase".
	Phase = "phase"
	// Policy is the field "policy".
	Policy = "policy"
	// Previous is the field "previous".
	Previous = "previous"
	// Rate is the field "rate".
	Rate = "rate"
	// RatePerSecond is the field "rate_per_second".
	RatePerSecond = "rate_per_second"
	// Reason is why something was refused or set aside.
	Reason = "reason"
	// Record is a record's id in its own system.
	Record = "record"
	// Records is the field "records".
	Records = "records"
	// Refusal is the field "refusal".
	Refusal = "refusal"
	// Relinked is the field "relinked".
	Relinked = "relinked"
	// Remote is the address a request came from.
	Remote = "remote"
	// Reread is the field "reread".
	Reread = "reread"
	// Resolved is the field "resolved".
	Resolved = "resolved"
	// RetryAfter is the field "retry_after".
	RetryAfter = "retry_after"
	// RetryIn is the field "retry_in".
	RetryIn = "retry_in"
	// Rotated is the field "rotated".
	Rotated = "rotated"
	// Route is an API route template.
	Route = "route"
	// Rows is the field "rows".
	Rows = "rows"
	// Seen is the field "seen".
	Seen = "seen"
	// Setup is the field "setup".
	Setup = "setup"
	// Signal is the field "signal".
	Signal = "signal"
	// Since is the field "since".
	Since = "since"
	// Size is the field "size".
	Size = "size"
	// Slot is the field "slot".
	Slot = "slot"
	// SlotLsn is the field "slot_lsn".
	SlotLsn = "slot_lsn"
	// Start is the field "start".
	Start = "start"
	// Status is the field "status".
	Status = "status"
	// Table is the field "table".
	Table = "table"
	// Threshold is the field "threshold".
	Threshold = "threshold"
	// Throttled is the field "throttled".
	Throttled = "throttled"
	// TimeZone is the time zone DATETIME columns are read in.
	TimeZone = "time_zone"
	// Total is the field "total".
	Total = "total"
	// TotalIsEstimate is the field "total_is_estimate".
	TotalIsEstimate = "total_is_estimate"
	// Type is the field "type".
	Type = "type"
	// Unchanged is the field "unchanged".
	Unchanged = "unchanged"
	// Unlinked is the field "unlinked".
	Unlinked = "unlinked"
	// Until is the field "until".
	Until = "until"
	// Updated is the field "updated".
	Updated = "updated"
	// URL is the field "url".
	URL = "url"
	// VanishedRecords is the field "vanished_records".
	VanishedRecords = "vanished_records"
	// Was is the field "was".
	Was = "was"
	// Webhook is the field "webhook".
	Webhook = "webhook"
	// WebhookID is a webhook delivery's id.
	WebhookID = "webhook_id"
	// Winner is the field "winner".
	Winner = "winner"
	// AppEditAt is when the app's side of a conflict was edited, as far
	// as the contact's versions tell.
	AppEditAt = "app_edit_at"
	// RecordEditAt is when the record's side of a conflict was edited.
	RecordEditAt = "record_edit_at"
	// RecordUpdatedAt is the record's own change time (its updated_at),
	// beside RecordEditAt when a field's own time is weighed.
	RecordUpdatedAt = "record_updated_at"
	// RecordEdits are record edit times kept or found (state.RecordEdit),
	// as target=value@time since the link's version.
	RecordEdits = "record_edits"
	// LinkSince is the record version a link agrees on (its
	// SourceUpdatedAt), beside RecordEdits.
	LinkSince = "link_since"
)
