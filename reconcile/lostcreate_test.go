package reconcile

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

// loseCreateAnswers serves the emulator, but closes the connection after
// each of the first n creates is committed, before any answer: the
// create landed, the client cannot know.
func loseCreateAnswers(t *testing.T, emu http.Handler, n int64) (url string, lost *atomic.Int64) {
	t.Helper()
	lost = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/contacts" {
			emu.ServeHTTP(w, r)
			return
		}
		if lost.Add(1) > n { // creates run in parallel: take a turn first
			lost.Add(-1)
			emu.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		emu.ServeHTTP(rec, r)
		if rec.Code != http.StatusCreated && rec.Code != http.StatusOK {
			t.Errorf("the emulator refused a create: %d %s", rec.Code, rec.Body)
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, lost
}

// TestLostCreateAnswersCountAsCreated: creates that were committed but
// whose answers were lost are found by the look-up that follows, linked,
// and counted as created in the pass summary, not as unchanged; no
// duplicate is made.
func TestLostCreateAnswersCountAsCreated(t *testing.T) {
	tests := []struct {
		name       string
		rows, lose int
	}{
		{"every create's answer lost", 17, 17},
		{"some of them", 40, 17},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.rows, emulator.Options{})
			url, lost := loseCreateAnswers(t, e.emu.Handler(), int64(tt.lose))
			ws, err := workspace.NewClient(workspace.ClientOptions{
				BaseURL: url, APIKey: "test-key", RateLimit: 1000, Burst: 100, MaxRetries: 8,
				Log: quietLog(), CustomFieldValues: emulator.TestCustomFieldValues(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ws.LoadCustomFields(context.Background()); err != nil {
				t.Fatal(err)
			}
			e.ws = ws
			sum := e.run()
			if got := lost.Load(); got != int64(tt.lose) {
				t.Fatalf("%d answers lost, want %d", got, tt.lose)
			}
			if sum.Created != tt.rows || sum.Unchanged != 0 || sum.Updated != 0 || sum.Failed != 0 {
				t.Errorf("summary %v, want %d created and nothing else", sum, tt.rows)
			}
			e.assertConverged()
			if again := e.run(); again.Unchanged != tt.rows || again.Created != 0 {
				t.Errorf("next pass %v, want %d unchanged", again, tt.rows)
			}
		})
	}
}
