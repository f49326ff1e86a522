package hubspot

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/syncd-io/syncd/connector"
)

// event is what the connector reads of a webhook event: which contact
// it names (FACTS.md, "Change webhooks").
type event struct {
	SubscriptionType string `json:"subscriptionType"`
	ObjectTypeID     string `json:"objectTypeId"`
	ObjectID         int64  `json:"objectId"`
}

// contactObjectType is the object type id of contacts, in the events of
// the generic object.* subscriptions.
const contactObjectType = "0-1"

// announced returns the ids of the contacts a verified delivery's events
// name (changehook.Announcer); events of other objects are left out, and
// a body that is not an array of events names none.
func announced(body []byte) []string {
	var evs []event
	if json.Unmarshal(body, &evs) != nil {
		return nil
	}
	var ids []string
	for _, e := range evs {
		contact := strings.HasPrefix(e.SubscriptionType, "contact.") || e.ObjectTypeID == contactObjectType
		if contact && e.ObjectID > 0 {
			ids = append(ids, strconv.FormatInt(e.ObjectID, 10))
		}
	}
	return ids
}

// readAnnounced reads the contacts the webhooks named since the last
// pass through the batch read endpoint, which shows a change at once
// where search may show it seconds later (FACTS.md), and emits them
// with checkpoint cp: the window still reads them in their turn. A
// merged contact comes after the contacts merged into it, as in a
// window; archived contacts are not returned (the archived scan reads
// them). When the read fails, the ids wait for the next pass.
func (s *Source) readAnnounced(ctx context.Context, cp checkpoint, emit func([]connector.Record, checkpoint) error) error {
	ids := s.TakeAnnounced()
	if len(ids) == 0 {
		return nil
	}
	var recs []connector.Record
	seen := map[string]bool{}
	props := append(slices.Clone(s.props), mergedProperty)
	err := s.readByID(ctx, ids, props, func(_ map[string]bool, objs []object) {
		for _, o := range objs {
			r := s.record(o)
			if seen[r.ID] {
				continue // several ids merged into one contact
			}
			seen[r.ID] = true
			recs = append(recs, mergedAway(o, r)...)
			recs = append(recs, r)
		}
	})
	if err != nil {
		s.Reannounce(ids)
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	return emit(recs, cp)
}
