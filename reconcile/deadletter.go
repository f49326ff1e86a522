package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/state"
)

// Dead-letter operations of the forward direction.
const (
	opRead = "read" // the source could not read the record whole (connector.Record.Invalid)
	opMap  = "map"  // the record could not be mapped to a contact
	opSync = "sync" // the contact could not be created or updated
)

// ForwardOperation reports whether dead letters of operation op are the
// forward direction's: the ones RetryDeadLetter can retry.
func ForwardOperation(op string) bool { return op == opMap || op == opSync }

// retryDelay is when a transient dead letter is tried again (the next run
// after it).
const retryDelay = time.Minute

// deadPayload is what a forward dead letter keeps: the record itself, so
// that it can be retried without the source, and the hash of its mapped
// values, so that a refused record costs no call until it changes.
type deadPayload struct {
	Record    connector.Record `json:"record"`
	Hash      string           `json:"hash,omitempty"`
	Permanent bool             `json:"permanent"`
	// reason is the stored letter's, read back: a letter set aside
	// again for the same reason is not logged again (see setAside).
	reason string
	// Twins are, for the dead letter of an externalId several records
	// give, those records' IDs (see duplicate.go).
	Twins []string `json:"twins,omitempty"`
}

// letters is the dead-letter step of a pass: it sets aside the records
// that fail, clears those that go through, and knows the connector's
// letters from earlier passes.
type letters struct {
	store interface {
		Add(d state.DeadLetter) (uint64, error)
		Clear(connector, operation, key string) error
		List(connector string) ([]state.DeadLetter, error)
	}
	conn  string
	now   func() time.Time
	log   *logrus.Entry
	tally *tally

	known map[string]deadPayload // dead letters of the connector, by key
	mu    sync.Mutex
	// readKeys are the keys of the records the source could not read
	// whole in this pass (see setAsideRead).
	readKeys map[string]bool
}

// loadLetters reads the connector's dead letters.
func loadLetters(store DeadLetterStore, conn string, now func() time.Time, log *logrus.Entry, t *tally) (*letters, error) {
	dls, err := store.List(conn)
	if err != nil {
		return nil, fmt.Errorf("read dead letters: %w", err)
	}
	known := make(map[string]deadPayload, len(dls))
	for _, d := range dls {
		var p deadPayload
		if json.Unmarshal(d.Payload, &p) != nil {
			continue
		}
		if d.Operation != opSync {
			p.Permanent = false // only refusals of a write skip the call
		}
		p.reason = d.Reason
		known[d.Key] = p
	}
	return &letters{store: store, conn: conn, now: now, log: log, tally: t, known: known}, nil
}

// setAside records a record that failed as a dead letter, with the API's
// reason, and counts it as failed. A refusal (permanent) is not retried
// until the record changes; a transient failure is retried by a later run.
func (l *letters) setAside(ctx context.Context, op, key string, rec connector.Record, hash string, permanent bool, cause error) {
	l.setAsidePayload(ctx, op, key, deadPayload{Record: rec, Hash: hash, Permanent: permanent}, cause)
}

// setAsidePayload is setAside with the whole payload.
func (l *letters) setAsidePayload(ctx context.Context, op, key string, dp deadPayload, cause error) {
	permanent := dp.Permanent
	l.tally.count(func(s *Summary) { s.Failed++ })
	payload, _ := json.Marshal(dp)
	now := l.now()
	d := state.DeadLetter{
		Connector: l.conn, Operation: op, Key: key,
		Payload: payload, Reason: cause.Error(), Attempts: 1,
	}
	if !permanent {
		d.NextTry = now.Add(retryDelay)
	}
	log := l.log.WithField(logfield.Key, key).WithField(logfield.Operation, op).WithField(logfield.Permanent, permanent)
	if _, err := l.store.Add(d); err != nil {
		log.WithError(err).Error("could not record dead letter")
		return
	}
	if old, ok := l.known[key]; ok && old.reason == cause.Error() {
		// Known since an earlier pass, for the same reason: said then.
		log.Debug("record set aside again as a dead letter, for the same reason")
		return
	}
	log.WithField(logfield.Reason, cause.Error()).Warn("record set aside as a dead letter")
}

// setAsideRead sets aside, under key, a record the source could not read
// whole.
func (l *letters) setAsideRead(ctx context.Context, key string, rec connector.Record) {
	l.mu.Lock()
	if l.readKeys == nil {
		l.readKeys = map[string]bool{}
	}
	l.readKeys[key] = true
	l.mu.Unlock()
	l.setAside(ctx, opRead, key, connector.Record{ID: rec.ID, Fields: rec.Fields}, "", true, rec.Invalid)
}

// clearStaleReadLetters drops, after a complete read of a connector that
// reads everything each pass, the read dead letters of lines this read
// did not report again (fixed, or gone from the file).
func (l *letters) clearStaleReadLetters() {
	dls, err := l.store.List(l.conn)
	if err != nil {
		l.log.WithError(err).Warn("could not read dead letters")
		return
	}
	for _, d := range dls {
		if d.Operation != opRead || l.readKeys[d.Key] {
			continue
		}
		if err := l.store.Clear(l.conn, opRead, d.Key); err != nil {
			l.log.WithError(err).WithField(logfield.Key, d.Key).Warn("could not clear dead letter")
		}
	}
}

// clearDeadLetter removes the dead letters of a record that went
// through: a write that had failed, or a mapping that had.
func (l *letters) clearDeadLetter(it *item) {
	for _, key := range []string{it.mapped.ExternalID, "record:" + it.rec.ID} {
		if _, ok := l.known[key]; !ok {
			continue
		}
		for _, op := range []string{opSync, opMap} {
			if err := l.store.Clear(l.conn, op, key); err != nil {
				l.log.WithError(err).WithField(logfield.Key, key).Warn("could not clear dead letter")
			}
		}
	}
}

// has reports whether the record has a dead letter the pass
// knows of.
func (l *letters) has(ext, recordID string) bool {
	_, byExt := l.known[ext]
	_, byRecord := l.known["record:"+recordID]
	_, twin := l.known[duplicateKey(ext)]
	return byExt || byRecord || twin
}

// duplicateKey is the key of the dead letter of an externalId's records.
func duplicateKey(ext string) string { return "duplicate:" + ext }
