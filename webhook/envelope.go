package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// event is what the receiver reads of an envelope.
type event struct {
	ID        string
	Type      string
	ContactID string
	UpdatedAt time.Time
}

// refusal is why a delivery is refused: a reason for the answer and the
// log, and a short label (one of the Reason constants) for the metric.
type refusal struct {
	label  string
	reason string
	// missing names what the envelope lacked, for the log (empty when
	// something was there but wrong).
	missing string
}

func (r *refusal) Error() string { return r.reason }

func refused(label, reason string) *refusal { return &refusal{label: label, reason: reason} }

// parse checks the envelope: an object with id and type, and for contact
// events the contact, with its id and updatedAt, in data.object (where
// the service's webhook guide puts it) or in data.resource (the shape of
// earlier emulators and of inbox events syncd wrote before the fix). An
// error is a *refusal.
func parse(body []byte) (event, error) {
	var env struct {
		ID   string               `json:"id"`
		Type string               `json:"type"`
		Data *workspace.EventData `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return event{}, refused(ReasonMalformed, "body is not a JSON envelope")
	}
	ev := event{ID: strings.TrimSpace(env.ID), Type: strings.TrimSpace(env.Type)}
	switch {
	case ev.ID == "":
		return event{}, &refusal{label: ReasonMalformed, reason: "envelope has no id", missing: "id"}
	case ev.Type == "":
		return event{}, &refusal{label: ReasonMalformed, reason: "envelope has no type", missing: "type"}
	case !strings.HasPrefix(ev.Type, "contact."):
		return ev, nil // not ours to check; the caller drops it
	}
	var raw json.RawMessage
	var where string
	if env.Data != nil {
		raw, where = env.Data.Payload()
	}
	if where == "" {
		return event{}, noContact(ev.Type, body)
	}
	// Almost every delivery is a valid contact: one decode tells. Anything
	// else goes through the checks below, which name what is wrong.
	var c workspace.Contact
	if json.Unmarshal(raw, &c) == nil && strings.TrimSpace(c.ID) != "" && !c.UpdatedAt.IsZero() {
		ev.ContactID, ev.UpdatedAt = strings.TrimSpace(c.ID), c.UpdatedAt.UTC()
		return ev, nil
	}
	return checkResource(ev, where, raw)
}

// noContact is the refusal of a contact event whose contact is in neither
// place, naming what the envelope's data holds instead, so that a change
// of the service's envelope shows on its first delivery.
func noContact(typ string, body []byte) *refusal {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(body, &env)
	has := "no data"
	var data map[string]json.RawMessage
	switch {
	case len(bytes.TrimSpace(env.Data)) == 0 || string(bytes.TrimSpace(env.Data)) == "null":
	case json.Unmarshal(env.Data, &data) != nil:
		has = "data is not an object"
	case len(data) == 0:
		has = "data is empty"
	default:
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, strconv.Quote(k))
		}
		sort.Strings(keys)
		if len(keys) > maxKeysNamed {
			keys = append(keys[:maxKeysNamed], "...")
		}
		has = "data has " + strings.Join(keys, ", ")
	}
	return &refusal{label: ReasonNoContact, missing: workspace.DataObject + ", " + workspace.DataResource,
		reason: fmt.Sprintf("%s event carries no contact: neither %s nor %s holds one (%s)", typ, workspace.DataObject, workspace.DataResource, has)}
}

// maxKeysNamed bounds the keys of data a refusal names.
const maxKeysNamed = 8

// checkResource checks a contact event's resource (found at where) field
// by field, to refuse it with the reason (or, should the whole decode have
// failed for a reason these checks accept, to accept it as before).
func checkResource(ev event, where string, resource json.RawMessage) (event, error) {
	var res struct {
		ID        *string `json:"id"`
		UpdatedAt *string `json:"updatedAt"`
	}
	if err := json.Unmarshal(resource, &res); err != nil {
		return event{}, refused(ReasonBadContact, where+" is not a contact object")
	}
	if res.ID == nil || strings.TrimSpace(*res.ID) == "" {
		return event{}, &refusal{label: ReasonBadContact, reason: where + " has no id", missing: where + ".id"}
	}
	if res.UpdatedAt == nil {
		return event{}, &refusal{label: ReasonBadContact, reason: where + " has no updatedAt", missing: where + ".updatedAt"}
	}
	at, err := time.Parse(time.RFC3339Nano, *res.UpdatedAt)
	if err != nil {
		return event{}, refused(ReasonBadContact, where+".updatedAt is not an RFC 3339 time")
	}
	// The whole contact must decode as the client reads contacts, or the
	// applier could not use it.
	var c workspace.Contact
	if err := json.Unmarshal(resource, &c); err != nil {
		return event{}, refused(ReasonBadContact, where+" is not a valid contact")
	}
	ev.ContactID, ev.UpdatedAt = strings.TrimSpace(*res.ID), at.UTC()
	return ev, nil
}
