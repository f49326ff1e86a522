package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/state"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
	"github.com/syncd-io/syncd/workspace/signature"
)

// webhookSecret signs the burst's deliveries.
const webhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// Senders is how many deliveries the webhooks scenario has in flight.
const Senders = 16

// Webhooks measures a burst of n contact.updated events, one per linked
// contact, POSTed signed to the receiver of a running `syncd run` by
// Senders concurrent senders: events accepted per second, and the time
// from each acknowledgement (the receiver's 2xx, as the sender reads it)
// to the commit of the row's UPDATE in PostgreSQL (as a LISTEN on the
// table's trigger notifications reads it, NOTIFY being delivered at
// commit). Both instants are read from this process's clock.
func Webhooks(ctx context.Context, binary, dir string, n int) ([]Figure, error) {
	table, err := newPGTable(ctx, PostgresURL(), n)
	if err != nil {
		return nil, err
	}
	defer table.drop()
	env, err := NewEnv(binary, dir, 2000, 50) // setup: the initial sync is not what is measured here
	if err != nil {
		return nil, err
	}
	defer env.Close()
	listen, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cfg, err := env.postgresConfig(PostgresURL(), table.Name, listen)
	if err != nil {
		return nil, err
	}
	if _, err := env.RunOnce(ctx, cfg); err != nil {
		return nil, fmt.Errorf("initial sync: %w", err)
	}
	if got := len(env.Emu.Contacts()); got != n {
		return nil, fmt.Errorf("initial sync made %d contacts, want %d", got, n)
	}
	if err := putSecret(filepath.Join(dir, "syncd.db")); err != nil {
		return nil, err
	}
	events, err := burstEvents(env.Emu.Contacts(), "Burst", time.Now())
	if err != nil {
		return nil, err
	}
	conn, err := table.listen(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()

	daemon, err := startChild(ctx, binary, "run", "--config", cfg)
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = daemon.terminate(30 * time.Second) }()
	if err := daemon.waitFor("sync pass finished", 5*time.Minute); err != nil {
		return nil, err
	}
	if err := quiet(ctx, env, time.Second, 2*time.Minute); err != nil { // the start-up catch-up's listing
		return nil, err
	}

	// Commits, read from the notifications as they come.
	cm := &commits{at: make(map[string]time.Time, 2*n)}
	lctx, stopListen := context.WithCancel(ctx)
	listening := make(chan error, 1)
	go func() {
		for {
			note, err := conn.Conn().WaitForNotification(lctx)
			if err != nil {
				listening <- err
				return
			}
			at := time.Now()
			_, value, _ := strings.Cut(note.Payload, ":")
			cm.mu.Lock()
			if _, seen := cm.at[value]; !seen {
				cm.at[value] = at
			}
			cm.mu.Unlock()
		}
	}()

	url := "http://" + listen + "/webhooks/workspace"
	cpu0, _ := procCPU(daemon.cmd.Process.Pid)
	calls0 := env.Emu.Stats()
	burst, err := deliverAll(ctx, url, events, 0, cm)
	if err != nil {
		stopListen()
		return nil, err
	}
	cpu1, _ := procCPU(daemon.cmd.Process.Pid)
	// A steady stream after the burst: each contact changed once more,
	// sent at SteadyRate events per second.
	steadyEvents, err := burstEvents(env.Emu.Contacts(), "Steady", time.Now().Add(time.Second))
	if err != nil {
		stopListen()
		return nil, err
	}
	steady, err := deliverAll(ctx, url, steadyEvents, SteadyRate, cm)
	stopListen()
	<-listening
	if err != nil {
		return nil, err
	}
	var during Result
	env.countCalls(&during, calls0)
	res, err := daemon.terminate(30 * time.Second)
	if err != nil {
		return nil, err
	}
	var rows int
	if err := table.pool.QueryRow(ctx, "SELECT count(*) FROM "+table.Name+" WHERE last_name LIKE 'Steady-%'").Scan(&rows); err != nil {
		return nil, err
	}
	after, err := env.RunOnce(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("forward pass after the events: %w", err)
	}

	scn := fmt.Sprintf("burst of %d webhook events, %d senders", n, Senders)
	rate := float64(len(burst.acks)) / burst.took.Seconds()
	figs := []Figure{
		fig(scn, "events accepted per second (2xx), each durable before its 2xx", fmt.Sprintf("%.0f/s (%d in %.2fs)", rate, len(burst.acks), burst.took.Seconds()),
			fmt.Sprintf(">= %d/s", MinIntake), rate >= MinIntake),
		fig(scn, "deliveries refused or failed", fmt.Sprint(burst.refused), "0", burst.refused == 0),
		fig(scn, "acknowledged events written to PostgreSQL", fmt.Sprintf("%d of %d", len(burst.acks)-burst.missing, len(burst.acks)),
			fmt.Sprint(n), burst.missing == 0 && len(burst.acks) == n),
	}
	figs = append(figs, burst.latencyFigures(scn, "")...)
	figs = append(figs,
		fig(scn, "CPU seconds of the daemon, burst and apply", fmt.Sprintf("%.2f", (cpu1-cpu0).Seconds()), "", true),
	)
	scn = fmt.Sprintf("steady %d webhook events/s (%d events)", SteadyRate, n)
	figs = append(figs,
		fig(scn, "events sent per second (2xx)", fmt.Sprintf("%.0f/s", float64(len(steady.acks))/steady.took.Seconds()), "", true),
		fig(scn, "deliveries refused or failed", fmt.Sprint(steady.refused), "0", steady.refused == 0),
		fig(scn, "acknowledged events written to PostgreSQL", fmt.Sprintf("%d of %d (%d rows hold their last event's value)", len(steady.acks)-steady.missing, len(steady.acks), rows),
			fmt.Sprint(n), steady.missing == 0 && rows == n),
	)
	figs = append(figs, steady.latencyFigures(scn, fmt.Sprintf("<= %d ms", SteadyMaxP99.Milliseconds()))...)
	scn = fmt.Sprintf("webhook events, burst and steady (%d each)", n)
	figs = append(figs,
		fig(scn, "peak anonymous memory (heap, stacks) of the daemon", MiB(res.PeakAnon), "", true),
		fig(scn, "workspace write calls during the events (echo loop)", fmt.Sprint(during.WriteCalls), "0", during.WriteCalls == 0),
		fig(scn, "write calls of the forward pass after them (echo loop)", fmt.Sprint(after.WriteCalls), "0", after.WriteCalls == 0),
	)
	return figs, nil
}

// Webhook targets.
const (
	// MinIntake is the least events per second the receiver must accept.
	MinIntake = 5000
	// SteadyRate is the steady phase's events per second.
	SteadyRate = 1000
	// SteadyMaxP99 bounds the acknowledgement → commit time at SteadyRate.
	SteadyMaxP99 = 250 * time.Millisecond
)

// commits holds when each value's row commit was notified.
type commits struct {
	mu sync.Mutex
	at map[string]time.Time
}

// phase is what one series of deliveries measured.
type phase struct {
	acks            map[string]time.Time
	refused         int
	took            time.Duration
	missing         int
	lat             []time.Duration // sorted
	first, lastDone time.Time
}

// deliverAll sends events (at rate per second, or as fast as Senders
// allow when rate is 0), then waits until every acknowledged event's row
// committed, or a generous while, and measures the phase.
func deliverAll(ctx context.Context, url string, events []burstEvent, rate int, cm *commits) (phase, error) {
	// Sign first: the service signs on its own machines, and signing here
	// would take the daemon's CPU while it is measured. The timestamps stay
	// well within the receiver's tolerance (5 minutes).
	for i := range events {
		h, err := signature.SignHeaders(webhookSecret, events[i].id, time.Now(), events[i].body)
		if err != nil {
			return phase{}, err
		}
		h.Set("Content-Type", "application/json")
		events[i].header = h
	}
	start := time.Now()
	acks, refused, took, err := send(ctx, url, events, rate)
	if err != nil {
		return phase{}, err
	}
	deadline := time.Now().Add(5*time.Minute + 10*took)
	for {
		cm.mu.Lock()
		got := 0
		for v := range acks {
			if _, ok := cm.at[v]; ok {
				got++
			}
		}
		cm.mu.Unlock()
		if got >= len(acks) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	ph := phase{acks: acks, refused: refused, took: took, first: start}
	cm.mu.Lock()
	for value, ack := range acks {
		at, ok := cm.at[value]
		if !ok {
			ph.missing++
			continue
		}
		ph.lat = append(ph.lat, max(at.Sub(ack), 0))
		if at.After(ph.lastDone) {
			ph.lastDone = at
		}
	}
	cm.mu.Unlock()
	slices.Sort(ph.lat)
	return ph, nil
}

// latencyFigures are the phase's acknowledgement → commit figures; p99
// gets the target when one is given.
func (ph phase) latencyFigures(scn, p99Target string) []Figure {
	if len(ph.lat) == 0 {
		return nil
	}
	p99 := percentile(ph.lat, 0.99)
	ok := true
	if p99Target != "" {
		ok = p99 <= SteadyMaxP99
	}
	return []Figure{
		fig(scn, "acknowledgement → row committed, p50", ms(percentile(ph.lat, 0.50)), "", true),
		fig(scn, "acknowledgement → row committed, p99", ms(p99), p99Target, ok),
		fig(scn, "acknowledgement → row committed, max", ms(ph.lat[len(ph.lat)-1]), "", true),
		fig(scn, "first send → last row committed", fmt.Sprintf("%.2fs", ph.lastDone.Sub(ph.first).Seconds()), "", true),
	}
}

// burstEvent is one prepared delivery: the event's body and the value it
// gives the contact's lastName.
type burstEvent struct {
	id, value string
	body      []byte
	header    http.Header // signed just before the sending starts
}

// burstEvents makes one contact.updated per contact, as the service
// would send it after a person changed the contact's last name to
// "<prefix>-<n>" at when.
func burstEvents(contacts []workspace.Contact, prefix string, when time.Time) ([]burstEvent, error) {
	now := when.UTC().Truncate(time.Millisecond)
	out := make([]burstEvent, 0, len(contacts))
	for i, c := range contacts {
		value := fmt.Sprintf("%s-%d", prefix, i+1)
		c.DefaultFields.LastName = &value
		c.UpdatedAt = now
		res, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		id := fmt.Sprintf("EV%s%010d", prefix, i+1)
		body, err := json.Marshal(workspace.Event{ID: id, Object: workspace.EventObject, APIVersion: workspace.DefaultVersion, CreatedAt: now,
			Type: workspace.EventContactUpdated, Data: workspace.EventData{Object: res}})
		if err != nil {
			return nil, err
		}
		out = append(out, burstEvent{id: id, value: value, body: body})
	}
	return out, nil
}

// send POSTs the events, signed at sending, from Senders goroutines: as
// fast as they go when rate is 0, else one every 1/rate seconds. It
// returns when each event was acknowledged, by its value, the number of
// deliveries answered otherwise, and the sending's duration.
func send(ctx context.Context, url string, events []burstEvent, rate int) (acks map[string]time.Time, refused int, took time.Duration, err error) {
	// One keep-alive connection per sender, as a delivery service keeps
	// them; the answers are a few bytes, so no compression is asked for.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConnsPerHost: Senders, MaxConnsPerHost: Senders, DisableCompression: true}}
	jobs := make(chan burstEvent, len(events))
	acks = make(map[string]time.Time, len(events))
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	start := time.Now()
	for range Senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range jobs {
				status, err := deliver(ctx, client, url, ev)
				at := time.Now()
				mu.Lock()
				switch {
				case err != nil:
					if firstErr == nil {
						firstErr = err
					}
				case status/100 == 2:
					acks[ev.value] = at
				default:
					refused++
				}
				mu.Unlock()
			}
		}()
	}
	for i, ev := range events {
		if rate > 0 {
			if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); d > 0 {
				time.Sleep(d)
			}
		}
		jobs <- ev
	}
	close(jobs)
	wg.Wait()
	return acks, refused, time.Since(start), firstErr
}

func deliver(ctx context.Context, client *http.Client, url string, ev burstEvent) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(ev.body))
	if err != nil {
		return 0, err
	}
	req.Header = ev.header // signed before the sending; the client does not change it
	req.ContentLength = int64(len(ev.body))
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// putSecret stores the burst's signing secret in the state file, as
// `syncd webhooks register` would.
func putSecret(path string) error {
	st, err := state.Open(path, state.Options{})
	if err != nil {
		return err
	}
	if err := st.Webhooks.PutSecret(state.WebhookSecret{WebhookID: "1", Secret: webhookSecret, CreatedAt: time.Now()}); err != nil {
		st.Close()
		return err
	}
	return st.Close()
}

// quiet waits until the emulator has served no API request for idle.
func quiet(ctx context.Context, env *Env, idle, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last, since := total(env.Emu.Stats()), time.Now()
	for time.Since(since) < idle {
		if time.Now().After(deadline) {
			return errors.New("the daemon kept calling the workspace API")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if t := total(env.Emu.Stats()); t != last {
			last, since = t, time.Now()
		}
	}
	return nil
}

// total counts the API requests in s.
func total(s emulator.Stats) int {
	n := 0
	for _, v := range s.Requests {
		n += v
	}
	return n
}

// freeAddr returns a loopback address no one listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// procCPU is the user and system time the process used so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
