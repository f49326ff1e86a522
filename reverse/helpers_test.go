package reverse

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/syncd-io/syncd/workspace"
)

func eventBody(t *testing.T, id, typ string, c workspace.Contact) []byte {
	t.Helper()
	res, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(workspace.Event{ID: id, Object: workspace.EventObject, APIVersion: workspace.DefaultVersion, CreatedAt: time.Now().UTC(), Type: typ,
		Data: workspace.EventData{Object: res}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
