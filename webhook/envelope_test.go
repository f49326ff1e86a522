package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

// TestEnvelopeShapesAccepted: a signed delivery in the envelope of the
// service's webhook guide ({id, object: "event", apiVersion, createdAt,
// type, data: {object: <contact>}}) is accepted and names its contact,
// whatever its apiVersion; the older data.resource shape is accepted too;
// when both are there data.object is the one read; a null data.object
// with a data.resource reads the resource.
func TestEnvelopeShapesAccepted(t *testing.T) {
	at := now.Add(-time.Minute).Truncate(time.Millisecond)
	ts := at.Format(time.RFC3339Nano)
	contact := func(id string) string {
		return `{"id":"` + id + `","object":"contact","externalId":"x1","source":"custom-crm","defaultFields":{"firstName":"Ann"},"customFields":[],"createdAt":"` + ts + `","updatedAt":"` + ts + `"}`
	}
	tests := []struct {
		name, body, wantContact string
	}{
		{name: "documented, guide's apiVersion",
			body: `{"id":"EVa1","object":"event","apiVersion":"v4","createdAt":"` + ts + `","type":"contact.updated","data":{"object":` + contact("CTobj") + `}}`, wantContact: "CTobj"},
		{name: "documented, spec's version in apiVersion",
			body: `{"id":"EVa2","object":"event","apiVersion":"2026-03-30","createdAt":"` + ts + `","type":"contact.deleted","data":{"object":` + contact("CTdel") + `}}`, wantContact: "CTdel"},
		{name: "old resource shape",
			body: `{"id":"EVa3","apiVersion":"2026-03-30","createdAt":"` + ts + `","type":"contact.updated","data":{"resource":` + contact("CTres") + `}}`, wantContact: "CTres"},
		{name: "both: data.object wins",
			body: `{"id":"EVa4","object":"event","type":"contact.updated","data":{"object":` + contact("CTwin") + `,"resource":` + contact("CTlose") + `}}`, wantContact: "CTwin"},
		{name: "null object beside a resource",
			body: `{"id":"EVa5","type":"contact.updated","data":{"object":null,"resource":` + contact("CTnull") + `}}`, wantContact: "CTnull"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			putSecret(t, f.store, secret, now, time.Time{})
			body := []byte(tt.body)
			status, ans := f.post(t, signed(t, secret, "msg_"+tt.wantContact, now, body), body)
			if status != 200 || !strings.Contains(ans, "accepted") {
				t.Fatalf("delivery: %d %s", status, ans)
			}
			evs := f.inbox(t)
			if len(evs) != 1 || evs[0].ContactID != tt.wantContact || !evs[0].ContactUpdatedAt.Equal(at) || string(evs[0].Body) != tt.body {
				t.Fatalf("inbox %+v, want contact %s at %v, body as delivered", evs, tt.wantContact, at)
			}
			if st := f.recv.Stats(); st.Accepted != 1 || st.Refused != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestRefusalLoggedAndCounted: a contact event whose contact is in
// neither data.object nor data.resource (here the service "renamed" it to
// data.payload) is refused with a log entry that names what was missing
// and what data held instead, and is counted under no_contact; other
// refusals are counted under their own reasons, and the counts by reason
// add up to Refused.
func TestRefusalLoggedAndCounted(t *testing.T) {
	f := newFixture(t, nil)
	putSecret(t, f.store, secret, now, time.Time{})
	renamed := []byte(`{"id":"EVr1","object":"event","apiVersion":"v5","createdAt":"2026-03-30T11:59:00.000Z","type":"contact.updated",` +
		`"data":{"payload":{"id":"CT1","updatedAt":"2026-03-30T11:59:00.000Z"}}}`)
	status, ans := f.post(t, signed(t, secret, "msg_r1", now, renamed), renamed)
	if status != 400 || !strings.Contains(ans, "neither data.object nor data.resource") {
		t.Fatalf("renamed envelope: %d %s", status, ans)
	}
	var entry map[string]any
	for _, line := range strings.Split(f.logs.String(), "\n") {
		if strings.Contains(line, "webhook delivery refused") {
			entry = logFields(line)
		}
	}
	if entry == nil {
		t.Fatalf("no refusal logged:\n%s", f.logs.String())
	}
	if entry["missing"] != "data.object, data.resource" || entry["refusal"] != ReasonNoContact ||
		!strings.Contains(entry["reason"].(string), `data has "payload"`) || entry["status"] != "400" {
		t.Fatalf("refusal log %v, want missing data.object and data.resource, data having payload", entry)
	}
	// A second kind of refusal: a wrong signature.
	good := contactBody(t, "EVr2", workspace.EventContactUpdated, "CT2", now)
	if status, _ := f.post(t, signed(t, otherKey, "msg_r2", now, good), good); status != 401 {
		t.Fatalf("bad signature: %d", status)
	}
	st := f.recv.Stats()
	if st.Refused != 2 || st.RefusedBy[ReasonNoContact] != 1 || st.RefusedBy[ReasonBadSignature] != 1 {
		t.Fatalf("stats %+v, want one no_contact and one bad_signature refusal", st)
	}
	var sum int64
	for _, r := range Reasons() {
		n, ok := st.RefusedBy[r]
		if !ok {
			t.Errorf("reason %s missing from RefusedBy", r)
		}
		sum += n
	}
	if sum != st.Refused || len(st.RefusedBy) != len(Reasons()) {
		t.Fatalf("RefusedBy %v does not add up to %d", st.RefusedBy, st.Refused)
	}
	if n := len(f.inbox(t)); n != 0 {
		t.Fatalf("refused deliveries left %d inbox events", n)
	}
}

// logFields parses one logrus text line (key=value, values maybe quoted)
// into its fields.
func logFields(line string) map[string]any {
	out := map[string]any{}
	for len(line) > 0 {
		line = strings.TrimLeft(line, " ")
		k, rest, ok := strings.Cut(line, "=")
		if !ok {
			break
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			var s string
			dec := json.NewDecoder(strings.NewReader(rest))
			if err := dec.Decode(&s); err != nil {
				break
			}
			v, rest = s, rest[dec.InputOffset():]
		} else {
			v, rest, _ = strings.Cut(rest, " ")
		}
		out[k], line = v, rest
	}
	return out
}
