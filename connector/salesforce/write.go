package salesforce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

// maxCollection is the most records one sObject Collections call takes.
const maxCollection = 200

const collectionsPath = "/composite/sobjects"

type saveResult struct {
	ID      *string `json:"id"`
	Success bool    `json:"success"`
	Errors  []struct {
		StatusCode string   `json:"statusCode"`
		Message    string   `json:"message"`
		Fields     []string `json:"fields"`
	} `json:"errors"`
}

// writeRun is one Write call.
type writeRun struct {
	s       *Source
	changes []connector.Change
	results []connector.WriteResult
	fields  []map[string]any // per change, by the describe's field names
	// created is set once a create call may have created records: from
	// then on failures are reported per change, never as a whole-call
	// error that would make the caller create them again.
	created bool
}

// Write applies changes through sObject Collections; see the package
// comment.
func (s *Source) Write(ctx context.Context, changes []connector.Change) ([]connector.WriteResult, error) {
	w := &writeRun{s: s, changes: changes, results: make([]connector.WriteResult, len(changes)), fields: make([]map[string]any, len(changes))}
	var creates, updates, deletes []int
	for i, ch := range changes {
		w.results[i].ID = ch.ID
		switch {
		case ch.Op == connector.OpCreate:
			creates = append(creates, i)
		case ch.Op != connector.OpUpdate && ch.Op != connector.OpDelete:
			w.results[i].Err = fmt.Errorf("change %d: unknown operation %d", i, ch.Op)
		case !validID(ch.ID):
			w.results[i].Err = fmt.Errorf("%s %s %q: %w", ch.Op, s.object, ch.ID, connector.ErrNotFound)
		case ch.Op == connector.OpDelete:
			deletes = append(deletes, i)
		case len(ch.Fields) > 0:
			updates = append(updates, i)
		}
	}
	if len(creates)+len(updates) > 0 {
		d, err := s.describeObject(ctx)
		if err != nil {
			return nil, err
		}
		creates, updates = w.prepare(d, creates), w.prepare(d, updates)
	}
	updates, err := w.unchanged(ctx, updates)
	if err != nil {
		return nil, err
	}
	steps := []struct {
		idx  []int
		send func(context.Context, []int) error
	}{{updates, w.sendUpdates}, {deletes, w.sendDeletes}, {creates, w.sendCreates}}
	for _, st := range steps {
		if err := w.run(ctx, st.idx, st.send); err != nil {
			return nil, err
		}
	}
	return w.results, nil
}

// prepare checks the fields of creates and updates against the describe
// and keeps those that can be sent: a field the object lacks, one that
// cannot be written, or a required field left empty fails its change
// alone, before any call (Salesforce would refuse the whole call for an
// unknown field).
func (w *writeRun) prepare(d *description, idx []int) []int {
	var keep []int
	for _, i := range idx {
		ch := w.changes[i]
		vals := map[string]any{}
		var problem *RecordError
		for k, v := range ch.Fields {
			f, ok := d.byLower[strings.ToLower(k)]
			writable := ok && ((ch.Op == connector.OpCreate && f.Createable) || (ch.Op == connector.OpUpdate && f.Updateable))
			if !writable {
				problem = &RecordError{Op: ch.Op, ID: ch.ID, Code: "INVALID_FIELD_FOR_INSERT_UPDATE", Fields: []string{k},
					Message: fmt.Sprintf("%s has no field %s that can be written: check the mapping against `syncd validate`", w.s.object, k)}
				break
			}
			vals[f.Name] = typed(f.Type, text(v))
		}
		if problem == nil {
			problem = w.missingRequired(d, ch, vals)
		}
		if problem != nil {
			w.results[i].Err = problem.result()
			continue
		}
		w.fields[i] = vals
		keep = append(keep, i)
	}
	return keep
}

// missingRequired refuses a create that leaves a required field empty,
// or an update that empties one, naming the field and the fix: syncd
// never makes a value up.
func (w *writeRun) missingRequired(d *description, ch connector.Change, vals map[string]any) *RecordError {
	for _, f := range d.required {
		v, set := vals[f]
		s, _ := v.(string)
		if (ch.Op == connector.OpCreate || set) && strings.TrimSpace(s) == "" {
			return &RecordError{Op: ch.Op, ID: ch.ID, Code: "REQUIRED_FIELD_MISSING", Fields: []string{f},
				Message: fmt.Sprintf("Salesforce requires %s on every %s and the workspace contact has no value for it: map a workspace field to %s, or give that field a fallback in the mapping (e.g. lastName: {from: %s, fallback: \"(no last name)\"})", f, w.s.object, f, f)}
		}
	}
	return nil
}

// text is a field value as JSON sends it: text, or null.
func text(v any) any {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		return t
	case []string:
		return strings.Join(t, ";")
	case time.Time:
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return fmt.Sprint(v)
}

// typed sends text as the JSON type of the field's describe type: a
// number for numeric fields, true or false for checkboxes; anything that
// does not convert stays text, for Salesforce to refuse naming the field.
func typed(fieldType string, v any) any {
	s, ok := v.(string)
	if !ok {
		return v
	}
	switch fieldType {
	case "double", "int", "long", "currency", "percent":
		if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return json.Number(strings.TrimSpace(s))
		}
	case "boolean":
		if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
			return b
		}
	}
	return v
}

// unchanged refuses, with connector.ErrChanged, the conditional updates
// whose record's SystemModstamp moved since it was read (ErrNotFound
// when it is gone), and returns the others.
func (w *writeRun) unchanged(ctx context.Context, idx []int) ([]int, error) {
	var ids []string
	for _, i := range idx {
		if !w.changes[i].IfUnchangedSince.IsZero() {
			ids = append(ids, w.changes[i].ID)
		}
	}
	if len(ids) == 0 {
		return idx, nil
	}
	recs, err := w.s.Get(ctx, ids)
	if err != nil {
		return nil, err
	}
	now := map[string]connector.Record{}
	for _, r := range recs {
		now[r.ID] = r
	}
	var keep []int
	for _, i := range idx {
		ch := w.changes[i]
		r, ok := now[ch.ID]
		switch {
		case ch.IfUnchangedSince.IsZero():
			keep = append(keep, i)
		case !ok || r.Deleted:
			w.results[i].Err = fmt.Errorf("update %s %s: %w", w.s.object, ch.ID, connector.ErrNotFound)
		case !r.UpdatedAt.Equal(ch.IfUnchangedSince):
			w.results[i].Err = fmt.Errorf("update %s %s: changed at %s: %w", w.s.object, ch.ID, r.UpdatedAt.Format(time.RFC3339), connector.ErrChanged)
		default:
			keep = append(keep, i)
		}
	}
	return keep, nil
}

// run sends the changes of one step in calls of at most 200, then sends
// again those refused for a record lock, up to lockAttempts rounds.
func (w *writeRun) run(ctx context.Context, idx []int, send func(context.Context, []int) error) error {
	for round := 1; len(idx) > 0; round++ {
		for start := 0; start < len(idx); start += maxCollection {
			chunk := idx[start:min(start+maxCollection, len(idx))]
			if err := w.sendSplit(ctx, chunk, send); err != nil {
				if !w.created {
					return err
				}
				for _, i := range chunk {
					w.results[i].Err = err
				}
			}
		}
		var locked []int
		for _, i := range idx {
			var re *RecordError
			if errors.As(w.results[i].Err, &re) && re.locked() && round < lockAttempts {
				locked = append(locked, i)
			}
		}
		if len(locked) > 0 {
			w.s.log.WithField(logfield.Records, len(locked)).Info("salesforce records locked by another transaction; sending them again")
			if err := w.s.c.sleep(ctx, time.Duration(round)*lockWait); err != nil {
				return err
			}
		}
		idx = locked
	}
	return nil
}

// sendSplit sends a chunk; when Salesforce refuses the whole call for
// its data (a 400 with an error code: one record's value it could not
// take) nothing of it was written, so the chunk is sent again in halves
// until the refusal is pinned on single records, each of which then
// fails alone with a *connector.RefusedError naming Salesforce's code,
// message and field, and the others are written.
func (w *writeRun) sendSplit(ctx context.Context, chunk []int, send func(context.Context, []int) error) error {
	err := send(ctx, chunk)
	refusal := callRefusal(err)
	if refusal == nil {
		return err
	}
	if len(chunk) == 1 {
		w.results[chunk[0]].Err = refusal
		return nil
	}
	half := len(chunk) / 2
	if err := w.sendSplit(ctx, chunk[:half], send); err != nil {
		return err
	}
	return w.sendSplit(ctx, chunk[half:], send)
}

// callRefusal returns the *connector.RefusedError of a call Salesforce
// refused as a whole with a definite answer about the data it carried
// (400 and an errorCode: JSON_PARSER_ERROR, INVALID_FIELD,
// FIELD_CUSTOM_VALIDATION_EXCEPTION, ...), or nil.
func callRefusal(err error) *connector.RefusedError {
	var e *Error
	if err == nil || !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Code == "" {
		return nil
	}
	field := ""
	if len(e.Fields) > 0 {
		field = e.Fields[0]
	}
	return &connector.RefusedError{Field: field, Code: e.Code, Reason: e.Message, Err: err}
}

func (w *writeRun) body(chunk []int, withID bool) map[string]any {
	recs := make([]map[string]any, len(chunk))
	for n, i := range chunk {
		r := map[string]any{"attributes": map[string]string{"type": w.s.object}}
		for k, v := range w.fields[i] {
			r[k] = v
		}
		if withID {
			r["id"] = w.changes[i].ID
		}
		recs[n] = r
	}
	return map[string]any{"allOrNone": false, "records": recs}
}

func (w *writeRun) sendUpdates(ctx context.Context, chunk []int) error {
	var res []saveResult
	if err := w.s.c.do(ctx, call{method: http.MethodPatch, path: collectionsPath, body: w.body(chunk, true)}, &res); err != nil {
		return fmt.Errorf("update %d %s records: %w", len(chunk), w.s.object, err)
	}
	return w.settle(chunk, res)
}

func (w *writeRun) sendDeletes(ctx context.Context, chunk []int) error {
	ids := make([]string, len(chunk))
	for n, i := range chunk {
		ids[n] = w.changes[i].ID
	}
	var res []saveResult
	q := url.Values{"ids": {strings.Join(ids, ",")}, "allOrNone": {"false"}}
	if err := w.s.c.do(ctx, call{method: http.MethodDelete, path: collectionsPath, query: q}, &res); err != nil {
		return fmt.Errorf("delete %d %s records: %w", len(chunk), w.s.object, err)
	}
	return w.settle(chunk, res)
}

func (w *writeRun) sendCreates(ctx context.Context, chunk []int) error {
	var res []saveResult
	err := w.s.c.do(ctx, call{method: http.MethodPost, path: collectionsPath, body: w.body(chunk, false)}, &res)
	w.created = w.created || err == nil || !isRefusal(err)
	if err != nil {
		return fmt.Errorf("create %d %s records: %w", len(chunk), w.s.object, err)
	}
	return w.settle(chunk, res)
}

// isRefusal reports whether a failed call was refused with a definite
// answer (so that it created nothing): an error answer, or a call not
// made (budget, no token).
func isRefusal(err error) bool {
	var e *Error
	var b *budgetError
	var t *TokenError
	return errors.As(err, &e) || errors.As(err, &b) || errors.As(err, &t)
}

// settle records the results of one call: one per record, in order.
func (w *writeRun) settle(chunk []int, res []saveResult) error {
	if len(res) != len(chunk) {
		// An answer that does not say what became of each record: a
		// create among them may have been applied.
		err := fmt.Errorf("%w: salesforce answered %d results for %d records", connector.ErrOutcomeUnknown, len(res), len(chunk))
		for _, i := range chunk {
			w.results[i].Err = err
		}
		return nil
	}
	for n, i := range chunk {
		r, ch := res[n], w.changes[i]
		if r.Success {
			w.results[i].Err = nil
			if r.ID != nil && *r.ID != "" {
				w.results[i].ID = *r.ID
			}
			continue
		}
		re := &RecordError{Op: ch.Op, ID: ch.ID, Code: "UNKNOWN_EXCEPTION"}
		if len(r.Errors) > 0 {
			re.Code, re.Message, re.Fields = r.Errors[0].StatusCode, r.Errors[0].Message, r.Errors[0].Fields
		}
		w.results[i].Err = re.result()
	}
	return nil
}
