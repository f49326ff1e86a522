package webhook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/signature"
)

// BenchmarkReceiveParallel is the receiver under concurrent deliveries of
// contact.updated events of realistic size, with the inbox synced to disk
// before each answer (group commit): verification, parsing and the
// durable enqueue, without the network. ns/op bounds the events per
// second the receiver accepts on this machine.
func BenchmarkReceiveParallel(b *testing.B) {
	st, err := state.Open(filepath.Join(b.TempDir(), "state.db"), state.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Webhooks.PutSecret(state.WebhookSecret{WebhookID: "1", Secret: secret, CreatedAt: time.Now()}); err != nil {
		b.Fatal(err)
	}
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	r, err := New(Options{Store: StoreOf(st), Log: logrus.NewEntry(log)})
	if err != nil {
		b.Fatal(err)
	}
	last := "Lovelace"
	contact, _ := json.Marshal(workspace.Contact{ID: "CT0000000000000001", DefaultFields: workspace.DefaultFields{
		FirstName: &last, LastName: &last, Emails: []workspace.Item{{ID: "i1", Name: "work", Value: "ada@example.com"}}},
		UpdatedAt: time.Now()})
	// Signed before the timing, as the service signs on its own machines.
	type delivery struct {
		body   []byte
		header http.Header
	}
	deliveries := make([]delivery, b.N)
	for i := range deliveries {
		id := fmt.Sprintf("EVbench%010d", i)
		body, _ := json.Marshal(workspace.Event{ID: id, Object: workspace.EventObject, APIVersion: workspace.DefaultVersion, CreatedAt: time.Now(),
			Type: workspace.EventContactUpdated, Data: workspace.EventData{Object: contact}})
		h, err := signature.SignHeaders(secret, id, time.Now(), body)
		if err != nil {
			b.Fatal(err)
		}
		deliveries[i] = delivery{body: body, header: h}
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d := deliveries[next.Add(1)-1]
			req := httptest.NewRequest(http.MethodPost, "/webhooks/workspace", bytes.NewReader(d.body))
			req.Header = d.header
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			if w.Code != http.StatusOK {
				b.Errorf("answer %d: %s", w.Code, w.Body)
				return
			}
		}
	})
}
