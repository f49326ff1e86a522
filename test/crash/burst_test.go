package crash

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/test/emutest"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
	"github.com/syncd-io/syncd/workspace/signature"
)

const burstSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// delivery is one webhook event as the service would deliver it.
type delivery struct {
	id   string
	body []byte
	// ext and version name the edit (version 0 for a deletion).
	ext     string
	version int
	deleted bool
}

// TestKillDuringWebhookBurst edits contacts in the app (several versions
// each, some then deleted) and delivers the service's events for those
// edits, signed, to the receiver of a running `syncd run`, killing it
// with SIGKILL at random moments of the burst and starting it again. As
// the service would, deliveries not acknowledged are sent again. Then:
// the table agrees with the workspace (an acknowledged deletion lost
// would leave its row live: catch-up cannot recover deletions), and the
// audit of the table shows syncd's writes of each row in order of the
// versions, never one twice.
func TestKillDuringWebhookBurst(t *testing.T) {
	rng := rand.New(rand.NewSource(*seed + 2000))
	const rows, versions, deletions = 150, 4, 30
	table := e2e.NewTable(t)
	table.InsertN(rows, func(i int) e2e.Values { return row(i, "") })
	emu := emulator.NewServer(emulator.Options{Rate: -1, Seed: *seed})
	t.Cleanup(emu.Close)
	dir := t.TempDir()
	statePath := filepath.Join(dir, "syncd.db")
	addr := freeAddr(t)
	cfg := e2e.WriteConfig(t, dir, e2e.ConfigOptions{
		EmulatorURL: emu.URL, Table: table.Name, StatePath: statePath, Listen: addr,
		RateLimit: 1000, Burst: 50, LogLevel: "warn",
	})
	runOK(t, time.Minute, "run", "--once", "--config", cfg)
	if n := len(emu.Contacts()); n != rows {
		t.Fatalf("initial sync: %d contacts for %d rows", n, rows)
	}
	// The subscription's secret, as `syncd webhooks register` stores it.
	// The emulator has no subscription: this test is the service.
	st, err := state.Open(statePath, state.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Webhooks.PutSecret(state.WebhookSecret{WebhookID: "1", Secret: burstSecret, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	events := burstEdits(t, rng, emu, versions, deletions)
	t.Logf("%d events for %d contacts (%d versions each, %d deleted)", len(events), rows, versions, deletions)

	// The burst, with kills at random points of it.
	p := start(t, "run", "--config", cfg)
	waitListening(t, context.Background(), p, addr)
	// After which delivery each kill comes, and how long after it.
	killAt := map[int64]time.Duration{}
	for range *kills {
		killAt[int64(1+rng.Intn(len(events)-1))] = time.Duration(1+rng.Intn(3000)) * time.Microsecond
	}
	var sent atomic.Int64
	// Senders hold mu for reading while they deliver; a restart holds
	// it for writing, so that no delivery is tried while the daemon is
	// down (the service backs off), but the kill itself lands among
	// deliveries in flight.
	var mu sync.RWMutex
	var killMu sync.Mutex // one kill and restart at a time
	var unacked []delivery
	var umu sync.Mutex
	hits := 0
	url := "http://" + addr + "/webhooks/workspace"
	client := &http.Client{Timeout: 10 * time.Second}
	jobs := make(chan delivery)
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range jobs {
				mu.RLock()
				cur := p
				ok := deliver(client, url, d)
				mu.RUnlock()
				if !ok {
					umu.Lock()
					unacked = append(unacked, d)
					umu.Unlock()
				}
				if n := sent.Add(1); killAt[n] > 0 {
					// The kill lands among the deliveries in flight;
					// new ones wait (mu) until the daemon is back.
					killMu.Lock()
					killed := make(chan bool, 1)
					go func() {
						time.Sleep(killAt[n])
						killed <- cur.Kill()
					}()
					mu.Lock()
					if <-killed {
						hits++
					}
					if !p.Running() {
						p = start(t, "run", "--config", cfg)
						waitListening(t, context.Background(), p, addr)
					}
					mu.Unlock()
					killMu.Unlock()
				}
			}
		}()
	}
	for _, d := range events {
		jobs <- d
	}
	close(jobs)
	wg.Wait()
	// The service delivers again what was not acknowledged.
	redelivered := len(unacked)
	for attempt := 0; len(unacked) > 0; attempt++ {
		if attempt == 5 {
			t.Fatalf("%d deliveries never acknowledged:\n%s", len(unacked), p.Out.String())
		}
		again := unacked
		unacked = nil
		for _, d := range again {
			if !deliver(client, url, d) {
				unacked = append(unacked, d)
			}
		}
		if len(unacked) > 0 {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if hits == 0 {
		t.Fatal("no kill hit the running daemon")
	}

	// Wait for the applier, then stop the daemon as an operator would.
	var problems []string
	for deadline := time.Now().Add(time.Minute); ; {
		if problems = e2e.Agree(table.Rows(), emu.Contacts()); len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	if err := p.Wait(t, 30*time.Second); err != nil {
		t.Errorf("syncd after SIGTERM: %v\n%s", err, p.Out.String())
	}
	if len(problems) > 0 {
		t.Fatalf("after %d kills in the burst, the table and the workspace disagree:\n  %s\nsyncd's output:\n%s",
			hits, strings.Join(problems, "\n  "), p.Out.String())
	}
	writes := checkWriteOrder(t, table, rows)
	t.Logf("%d kills hit the daemon during the burst; %d deliveries sent again; syncd wrote %d last names", hits, redelivered, writes)
}

// burstEdits makes the edits in the app and returns the events the
// service would deliver for them, in an order close to the edits' but
// with some out of order, as retries make them.
func burstEdits(t *testing.T, rng *rand.Rand, emu *emulator.Server, versions, deletions int) []delivery {
	t.Helper()
	contacts := emu.Contacts()
	var perContact [][]delivery
	deleted := map[int]bool{}
	for _, i := range rng.Perm(len(contacts))[:deletions] {
		deleted[i] = true
	}
	for i, c := range contacts {
		ext := *c.ExternalID
		var evs []delivery
		for v := 1; v <= versions; v++ {
			after := emutest.NewApp(t, emu.URL).Patch(c.ID, workspace.ContactPatch{DefaultFields: &workspace.DefaultFieldsPatch{
				LastName: workspace.Some(fmt.Sprintf("B%s-v%d", ext, v))}})
			evs = append(evs, event(t, workspace.EventContactUpdated, after, ext, v))
			c = after
		}
		if deleted[i] {
			emutest.NewApp(t, emu.URL).Delete(c.ID)
			d := event(t, workspace.EventContactDeleted, c, ext, 0)
			d.deleted = true
			evs = append(evs, d)
		}
		perContact = append(perContact, evs)
	}
	// Interleave the contacts' events; each event goes at its position
	// plus a random delay, so a few come after later ones.
	type slot struct {
		at float64
		d  delivery
	}
	var slots []slot
	for _, evs := range perContact {
		base := rng.Float64() * 100
		for j, d := range evs {
			slots = append(slots, slot{base + float64(j)*20 + rng.ExpFloat64()*8, d})
		}
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i].at < slots[j].at })
	out := make([]delivery, len(slots))
	for i, s := range slots {
		out[i] = s.d
	}
	return out
}

func event(t *testing.T, typ string, c workspace.Contact, ext string, version int) delivery {
	t.Helper()
	res, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("EV%s-%s-%d", typ, ext, version)
	body, err := json.Marshal(workspace.Event{ID: id, Object: workspace.EventObject, APIVersion: workspace.DefaultVersion, CreatedAt: c.UpdatedAt,
		Type: typ, Data: workspace.EventData{Object: res}})
	if err != nil {
		t.Fatal(err)
	}
	return delivery{id: id, body: body, ext: ext, version: version}
}

// deliver POSTs one signed delivery; it reports whether it was
// acknowledged (2xx).
func deliver(client *http.Client, url string, d delivery) bool {
	h, err := signature.SignHeaders(burstSecret, d.id, time.Now(), d.body)
	if err != nil {
		return false
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.body))
	if err != nil {
		return false
	}
	req.Header = h
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

var versionRE = regexp.MustCompile(`"last_name": "B\d+-v(\d+)"`)

// checkWriteOrder reads the table's audit: syncd's writes of each row's
// last name must go forward through the versions, never back, never the
// same one twice.
func checkWriteOrder(t *testing.T, table *e2e.Table, rows int) (writes int) {
	t.Helper()
	for id := int64(1); id <= int64(rows); id++ {
		last := 0
		for _, line := range table.History(id) {
			if !strings.Contains(line, " syncd UPDATE ") {
				continue
			}
			_, after, _ := strings.Cut(line, " -> ")
			m := versionRE.FindStringSubmatch(after)
			if m == nil {
				continue // the soft delete, or another column
			}
			v, _ := strconv.Atoi(m[1])
			before, _, _ := strings.Cut(line, " -> ")
			if mb := versionRE.FindStringSubmatch(before); mb != nil && mb[1] == m[1] {
				continue // the write of another column; the last name stays
			}
			if v <= last {
				t.Errorf("row %d: syncd wrote version %d after version %d:\n  %s", id, v, last, strings.Join(table.History(id), "\n  "))
				break
			}
			last = v
			writes++
		}
	}
	return writes
}
