package soak

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncd-io/syncd/test/e2e"
	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

// Shares of a side's operations: the rest are field edits. Creates
// take refillShare while fewer than Options.Active contacts are active.
const (
	createShare = 0.04
	refillShare = 0.3
	deleteShare = 0.05
	// A contact is active for minEdits to maxEdits edits, then left
	// alone to the end, so that the last edit of most fields can be
	// checked however long the run (a contact edited to the end would
	// show only its last few edits).
	minEdits, maxEdits = 3, 12
	// hotShare of the edits go to a field the other side edited in the
	// last hotWindow: the races and near-races the lost edits
	// came from.
	hotShare  = 0.3
	hotWindow = 15 * time.Second
)

// entities are the contacts the soak knows, by key (e-mail), with their
// handle on each side as last seen and the edits left before they retire.
type entities struct {
	mu     sync.Mutex
	keys   []string // the active ones, in order of creation: seeded choices index it
	left   map[string]int
	row    map[string]int64
	ct     map[string]string
	recent []Edit // field edits of the last hotWindow
	// added is when each key was added: a refresh from sides read before
	// then does not know it yet.
	added map[string]time.Time
	// busy are the keys a worker of a side is editing or deleting
	// (side+key): a side's workers never work on one contact at once,
	// so that the order of its acknowledged edits is their order.
	busy map[string]bool
}

func newEntities() *entities {
	return &entities{row: map[string]int64{}, ct: map[string]string{}, left: map[string]int{}, busy: map[string]bool{}, added: map[string]time.Time{}}
}

// add makes key active for edits edits.
func (es *entities) add(key string, row int64, contact string, edits int) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if _, ok := es.left[key]; !ok {
		es.keys = append(es.keys, key)
		es.left[key] = edits
		es.added[key] = time.Now()
	}
	if row != 0 {
		es.row[key] = row
	}
	if contact != "" {
		es.ct[key] = contact
	}
}

// refresh sets every key's handles from the sides as they were read at
// read: a key with no live row (contact) has none, and one added before
// read with neither, deleted on both sides, retires (kept, the deleted keys would count as active and
// hold back the creates that keep the rate: the hour-long runs fell from
// 12 to 8 edits/s after a few minutes).
func (es *entities) refresh(read time.Time, rows []e2e.Row, contacts []workspace.Contact) {
	row := map[string]int64{}
	for _, r := range rows {
		if !r.Deleted && r.Email != "" {
			row[r.Email] = r.ID
		}
	}
	ct := map[string]string{}
	for _, c := range contacts {
		if v := e2e.ContactValues(c); v.Email != "" {
			ct[v.Email] = c.ID
		}
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	es.row, es.ct = row, ct
	for _, k := range append([]string(nil), es.keys...) {
		if row[k] == 0 && ct[k] == "" && es.added[k].Before(read) && !es.busy[Table+k] && !es.busy[App+k] {
			es.retire(k)
		}
	}
}

// pick chooses a key live on side and not busy there, and marks it busy
// (release frees it): with hotShare, one whose field the other side
// edited lately (and that field); else any.
func (es *entities) pick(rng *rand.Rand, side string) (key string, row int64, contact string, field string, ok bool) {
	es.mu.Lock()
	defer es.mu.Unlock()
	live := func(k string) bool {
		if es.left[k] <= 0 || es.busy[side+k] {
			return false
		}
		if side == Table {
			return es.row[k] != 0
		}
		return es.ct[k] != ""
	}
	cut := time.Now().Add(-hotWindow)
	for len(es.recent) > 0 && es.recent[0].At.Before(cut) {
		es.recent = es.recent[1:]
	}
	field = Fields[rng.Intn(len(Fields))]
	if rng.Float64() < hotShare {
		var hot []Edit
		for _, e := range es.recent {
			if e.Side != side && live(e.Key) {
				hot = append(hot, e)
			}
		}
		if len(hot) > 0 {
			e := hot[rng.Intn(len(hot))]
			for f := range e.Values {
				field = f
			}
			es.busy[side+e.Key] = true
			return e.Key, es.row[e.Key], es.ct[e.Key], field, true
		}
	}
	var alive []string
	for _, k := range es.keys {
		if live(k) {
			alive = append(alive, k)
		}
	}
	if len(alive) == 0 {
		return "", 0, "", "", false
	}
	k := alive[rng.Intn(len(alive))]
	es.busy[side+k] = true
	return k, es.row[k], es.ct[k], field, true
}

// release frees a key pick marked busy on side.
func (es *entities) release(side, key string) {
	es.mu.Lock()
	defer es.mu.Unlock()
	delete(es.busy, side+key)
}

// edited counts an edit against its contact's budget: a contact with
// none left retires.
func (es *entities) edited(e Edit) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.recent = append(es.recent, e)
	if es.left[e.Key]--; es.left[e.Key] <= 0 {
		es.retire(e.Key)
	}
}

func (es *entities) retire(key string) {
	es.left[key] = 0
	for i, k := range es.keys {
		if k == key {
			es.keys = append(es.keys[:i], es.keys[i+1:]...)
			return
		}
	}
}

// active is the number of contacts still to be edited.
func (es *entities) active() int {
	es.mu.Lock()
	defer es.mu.Unlock()
	return len(es.keys)
}

// gone notes that key has no row (contact) any more.
func (es *entities) gone(side, key string) {
	es.mu.Lock()
	defer es.mu.Unlock()
	if side == Table {
		delete(es.row, key)
	} else {
		delete(es.ct, key)
	}
}

// resolver refreshes the handles every 250 ms until stop is closed.
func (w *world) resolver(stop <-chan struct{}, errs chan<- error) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(250 * time.Millisecond):
		}
		read := time.Now()
		rows, err := w.rows()
		if err != nil {
			errs <- err
			return
		}
		w.ents.refresh(read, rows, w.emu.Contacts())
	}
}

// rows reads the table (the test goroutine uses e2e.Table.Rows).
func (w *world) rows() ([]e2e.Row, error) {
	ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
	defer cancel()
	return w.table.RowsLive(ctx)
}

// driver makes one side's edits at rate per second until stop is
// closed, with workers working at once (each at rate/workers, on
// contacts the others are not working on): one worker alone falls short
// of the rate when the machine is loaded and each operation takes longer
// than its share of a second. seq numbers the values (unique across
// both sides).
func (w *world) driver(side string, rate float64, workers int, seq *atomic.Int64, stop <-chan struct{}, errs chan<- error) {
	workers = max(workers, 1)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.worker(side, i, rate/float64(workers), seq, stop, errs)
		}()
	}
	wg.Wait()
}

// worker is one of a side's drivers: its choices are seeded by the run's
// seed, the side and its number.
func (w *world) worker(side string, n int, rate float64, seq *atomic.Int64, stop <-chan struct{}, errs chan<- error) {
	seed := w.o.Seed + 1
	if side == App {
		seed = w.o.Seed + 2
	}
	rng := newRand(seed + 1000*int64(n))
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	prefix := "T"
	if side == App {
		prefix = "A"
	}
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		// An edit of a contact deleted meanwhile is not acknowledged:
		// another is tried, so that Rate counts acknowledged edits.
		var err error
		for try, acked := 0, false; try < 5 && !acked && err == nil; try++ {
			acked, err = w.op(rng, side, prefix, seq)
		}
		if err != nil {
			errs <- fmt.Errorf("%s driver: %w", side, err)
			return
		}
	}
}

// op makes one seeded operation on side; it reports whether it was
// acknowledged.
func (w *world) op(rng *rand.Rand, side, prefix string, seq *atomic.Int64) (bool, error) {
	n := seq.Add(1)
	value := fmt.Sprintf("%s%d", prefix, n)
	creates := createShare
	if w.ents.active() < w.o.Active {
		creates = refillShare
	}
	switch p := rng.Float64(); {
	case p < creates:
		return true, w.create(rng, side, n, value)
	case p < creates+deleteShare:
		if key, row, ct, _, ok := w.ents.pick(rng, side); ok {
			defer w.ents.release(side, key)
			return w.remove(side, key, row, ct)
		}
	default:
		if key, row, ct, field, ok := w.ents.pick(rng, side); ok {
			defer w.ents.release(side, key)
			return w.edit(side, key, row, ct, field, value)
		}
	}
	return false, nil
}

func (w *world) app() emulator.App { return emulator.App{BaseURL: w.url} }

func opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 30*time.Second)
}

// edit sets one field on side; an edit of a row or contact that is gone
// is not acknowledged and not logged.
func (w *world) edit(side, key string, row int64, contact, field, value string) (bool, error) {
	ctx, cancel := opCtx(w.ctx)
	defer cancel()
	if side == Table {
		applied, err := w.table.EditLive(ctx, row, Columns[field], value)
		if err != nil {
			return false, fmt.Errorf("update row %d: %w", row, err)
		}
		if !applied {
			w.ents.gone(side, key)
			return false, nil
		}
	} else {
		p := &workspace.DefaultFieldsPatch{}
		switch field {
		case "firstName":
			p.FirstName = workspace.Some(value)
		case "lastName":
			p.LastName = workspace.Some(value)
		case "company":
			p.Company = workspace.Some(value)
		}
		if _, err := w.app().UpdateContact(ctx, contact, workspace.ContactPatch{DefaultFields: p}); err != nil {
			if notFound(err) {
				w.ents.gone(side, key)
				return false, nil
			}
			return false, fmt.Errorf("edit contact %s: %w", contact, err)
		}
	}
	e := w.log.Add(Edit{At: time.Now(), Side: side, Op: OpEdit, Key: key, Values: map[string]string{field: value}, Row: row, Contact: contact})
	w.ents.edited(e)
	return true, nil
}

// create makes a contact on side, with every field set to value.
func (w *world) create(rng *rand.Rand, side string, n int64, value string) error {
	ctx, cancel := opCtx(w.ctx)
	defer cancel()
	key := fmt.Sprintf("%s%d@soak.example", strings.ToLower(value[:1]), n)
	e := Edit{Side: side, Op: OpCreate, Key: key, Values: map[string]string{"firstName": value, "lastName": value, "company": value}}
	if side == Table {
		id, err := w.table.InsertLive(ctx, e2e.Values{First: value, Last: value, Company: value, Email: key})
		if err != nil {
			return fmt.Errorf("insert row: %w", err)
		}
		e.Row = id
	} else {
		c, err := w.app().CreateContact(ctx, workspace.ContactCreate{DefaultFields: workspace.DefaultFieldsInput{
			FirstName: value, LastName: value, Company: value, Emails: []workspace.Item{{Name: "work", Value: key}}}})
		if err != nil {
			return fmt.Errorf("create contact: %w", err)
		}
		e.Contact = c.ID
	}
	e.At = time.Now()
	w.log.Add(e)
	w.ents.add(key, e.Row, e.Contact, minEdits+rng.Intn(maxEdits-minEdits+1))
	return nil
}

// remove deletes a contact on side (a soft delete in the table).
func (w *world) remove(side, key string, row int64, contact string) (bool, error) {
	ctx, cancel := opCtx(w.ctx)
	defer cancel()
	if side == Table {
		applied, err := w.table.SoftDeleteLive(ctx, row)
		if err != nil {
			return false, fmt.Errorf("delete row %d: %w", row, err)
		}
		if !applied {
			w.ents.gone(side, key)
			return false, nil
		}
	} else if err := w.app().DeleteContact(ctx, contact); err != nil {
		if notFound(err) {
			w.ents.gone(side, key)
			return false, nil
		}
		return false, fmt.Errorf("delete contact %s: %w", contact, err)
	}
	w.log.Add(Edit{At: time.Now(), Side: side, Op: OpDelete, Key: key, Row: row, Contact: contact})
	// Not retired: the other side may edit it until syncd deletes it
	// there (an edit after delete).
	w.ents.gone(side, key)
	return true, nil
}

// notFound tells the app's 404 (the contact was deleted meanwhile).
func notFound(err error) bool {
	return err != nil && strings.Contains(err.Error(), "404")
}
