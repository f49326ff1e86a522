package emulator

import (
	"encoding/json"
	"net/http"

	"github.com/syncd-io/syncd/workspace"
)

// webhookDeliveries serves GET /webhooks/{id}/events: the delivery
// history ({data: [Delivery]}), oldest first.
func (e *Emulator) webhookDeliveries(r *http.Request) answer {
	e.mu.Lock()
	defer e.mu.Unlock()
	wh, err := e.webhookOf(r)
	if err != nil {
		return fail(err)
	}
	return ok(http.StatusOK, dataOf(wh.history()))
}

// retryDelivery serves POST /webhooks/{id}/events/{eventId}/retry, where
// eventId is a delivery's id or its event's id: a new round of attempts
// starts at once ({data: Delivery}).
func (e *Emulator) retryDelivery(r *http.Request) answer {
	e.mu.Lock()
	defer e.mu.Unlock()
	wh, aerr := e.webhookOf(r)
	if aerr != nil {
		return fail(aerr)
	}
	evID := r.PathValue("eventId")
	dl := wh.deliveryByID[evID]
	if dl == nil {
		return fail(e.newError(areaWebhooks, http.StatusNotFound, "Event "+evID+" of webhook "+wh.wh.ID+" was not found"))
	}
	dl.round++
	dl.tries = 0
	dl.d.Status, dl.d.NextAttemptAt, dl.d.UpdatedAt = DeliveryPending, nil, e.now()
	e.deliver.enqueue(wh.wh.ID, dl, dl.round)
	return ok(http.StatusOK, dataOf(dl.public()))
}

// testEvent serves POST /webhooks/{id}/events/test: a delivery of the
// webhook's first event type about a sample resource whose id starts with
// "test" ({data: Delivery}).
func (e *Emulator) testEvent(r *http.Request) answer {
	e.mu.Lock()
	defer e.mu.Unlock()
	wh, aerr := e.webhookOf(r)
	if aerr != nil {
		return fail(aerr)
	}
	event := wh.wh.Events[0]
	var resource []byte
	switch event {
	case workspace.EventContactUpdated, workspace.EventContactDeleted:
		first := "Test"
		resource, _ = json.Marshal(workspace.Contact{ID: "test", DefaultFields: workspace.DefaultFields{FirstName: &first},
			CustomFields: []workspace.CustomField{}, CreatedAt: e.now(), UpdatedAt: e.now()})
	default:
		resource, _ = json.Marshal(map[string]string{"id": "test"})
	}
	dl := e.queueLocked(wh, e.state.hexID("EVtest", 12), event, resource)
	return ok(http.StatusOK, dataOf(dl.public()))
}
