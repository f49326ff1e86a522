package reconcile

import (
	"fmt"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
	"github.com/syncd-io/syncd/mapping"
	"github.com/syncd-io/syncd/state"
)

// loadWarned reads which records of the connector stand with field
// warnings, so that a pass touches the state only for those and for
// records with new warnings.
func (r *Reconciler) loadWarned() (map[string]bool, error) {
	ws, err := r.opts.Store.FieldWarnings.List(r.opts.Connector)
	if err != nil {
		return nil, fmt.Errorf("read field warnings: %w", err)
	}
	warned := make(map[string]bool, len(ws))
	for _, w := range ws {
		warned[w.Key] = true
	}
	return warned, nil
}

// noteWarnings records the field warnings of a mapped record (the values
// left out of its contact), or that it has none any more, and logs the
// new or changed ones: once per change of the value, not on every pass.
// A failure to record them is logged; the record syncs all the same.
func (p *pass) noteWarnings(rec connector.Record, m mapping.Mapped) {
	r := p.r
	p.warnMu.Lock()
	defer p.warnMu.Unlock()
	if len(m.Warnings) == 0 && !p.warned[m.ExternalID] {
		return
	}
	ws := make([]state.FieldWarning, len(m.Warnings))
	for i, w := range m.Warnings {
		ws[i] = state.FieldWarning{RecordID: rec.ID, Field: w.Field, From: w.From, Value: w.Value, Reason: w.Err.Error()}
	}
	fresh, err := r.opts.Store.FieldWarnings.Set(r.opts.Connector, m.ExternalID, ws)
	if err != nil {
		r.log.WithError(err).WithField(logfield.ExternalID, m.ExternalID).Error("could not record field warnings")
		return
	}
	p.warned[m.ExternalID] = len(ws) > 0
	for _, w := range fresh {
		r.log.WithField(logfield.ExternalID, m.ExternalID).WithField(logfield.Field, w.Field).WithField(logfield.From, w.From).
			WithField(logfield.Reason, w.Reason).Warn("field left out of the contact, which synced without it; fix the value at the source")
	}
}

// dropWarnings forgets the field warnings of a record that is gone.
func (p *pass) dropWarnings(externalID string) {
	p.warnMu.Lock()
	defer p.warnMu.Unlock()
	if !p.warned[externalID] {
		return
	}
	if _, err := p.r.opts.Store.FieldWarnings.Set(p.r.opts.Connector, externalID, nil); err != nil {
		p.r.log.WithError(err).WithField(logfield.ExternalID, externalID).Warn("could not drop field warnings")
		return
	}
	delete(p.warned, externalID)
}
