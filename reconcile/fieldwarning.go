package reconcile

import (
	"fmt"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
)

// loadWarnings reads which records of the connector stand with field
// warnings, so that a pass touches the state only for those and for
// records with new warnings.
func loadWarnings(store FieldWarningStore, conn string, log *logrus.Entry) (*warnings, error) {
	ws, err := store.List(conn)
	if err != nil {
		return nil, fmt.Errorf("read field warnings: %w", err)
	}
	warned := make(map[string]bool, len(ws))
	for _, w := range ws {
		warned[w.Key] = true
	}
	return &warnings{store: store, conn: conn, log: log, warned: warned}, nil
}

// warnings is the step that keeps the field warnings of the records a
// pass maps.
type warnings struct {
	store FieldWarningStore
	conn  string
	log   *logrus.Entry

	mu sync.Mutex
	// warned holds the externalIds of records with field warnings.
	warned map[string]bool
}

// note records the field warnings of a mapped record (the values
// left out of its contact), or that it has none any more, and logs the
// new or changed ones: once per change of the value, not on every pass.
// A failure to record them is logged; the record syncs all the same.
func (w *warnings) note(rec connector.Record, m mapping.Mapped) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(m.Warnings) == 0 && !w.warned[m.ExternalID] {
		return
	}
	ws := make([]state.FieldWarning, len(m.Warnings))
	for i, mw := range m.Warnings {
		ws[i] = state.FieldWarning{RecordID: rec.ID, Field: mw.Field, From: mw.From, Value: mw.Value, Reason: mw.Err.Error()}
	}
	fresh, err := w.store.Set(w.conn, m.ExternalID, ws)
	if err != nil {
		w.log.WithError(err).WithField(logfield.ExternalID, m.ExternalID).Error("could not record field warnings")
		return
	}
	w.warned[m.ExternalID] = len(ws) > 0
	for _, fw := range fresh {
		w.log.WithField(logfield.ExternalID, m.ExternalID).WithField(logfield.Field, fw.Field).WithField(logfield.From, fw.From).
			WithField(logfield.Reason, fw.Reason).Warn("field left out of the contact, which synced without it; fix the value at the source")
	}
}

// drop forgets the field warnings of a record that is gone.
func (w *warnings) drop(externalID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.warned[externalID] {
		return
	}
	if _, err := w.store.Set(w.conn, externalID, nil); err != nil {
		w.log.WithError(err).WithField(logfield.ExternalID, externalID).Warn("could not drop field warnings")
		return
	}
	delete(w.warned, externalID)
}
