package hubspot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/syncd-io/syncd/connector"
	"github.com/syncd-io/syncd/internal/logfield"
)

const (
	batchPath      = "/crm/v3/objects/contacts/batch/"
	maxBatchInputs = 100
	valueTimeFmt   = "2006-01-02T15:04:05.000Z"
)

type batchInput struct {
	ID                 string            `json:"id,omitempty"`
	ObjectWriteTraceID string            `json:"objectWriteTraceId,omitempty"`
	Properties         map[string]string `json:"properties,omitempty"`
}

type batchRequest struct {
	Inputs     []batchInput `json:"inputs"`
	Properties []string     `json:"properties,omitempty"`
}

type batchResult struct {
	object
	ObjectWriteTraceID string `json:"objectWriteTraceId"`
}

type batchAnswer struct {
	Status    string        `json:"status"`
	Results   []batchResult `json:"results"`
	NumErrors int           `json:"numErrors"`
	Errors    []wireError   `json:"errors"`
}

// writeRun is one Write call.
type writeRun struct {
	s       *Source
	changes []connector.Change
	props   []map[string]string
	results []connector.WriteResult
	// done marks the changes whose result is settled.
	done []bool
	// created is set once a create call may have created contacts:
	// from then on failures are reported per change, never as a
	// whole-call error that would make the caller create them again.
	created bool
}

// Write applies changes through the batch endpoints; see the package
// comment for how calls are grouped and failures reported.
func (s *Source) Write(ctx context.Context, changes []connector.Change) ([]connector.WriteResult, error) {
	w := &writeRun{
		s: s, changes: changes,
		props:   make([]map[string]string, len(changes)),
		results: make([]connector.WriteResult, len(changes)),
		done:    make([]bool, len(changes)),
	}
	var creates, updates, deletes []int
	for i, ch := range changes {
		w.results[i].ID = ch.ID
		switch ch.Op {
		case connector.OpCreate, connector.OpUpdate:
			props, err := toProperties(ch.Fields)
			if err != nil {
				w.results[i].Err = fmt.Errorf("%s contact %s: %w", ch.Op, ch.ID, err)
				continue
			}
			w.props[i] = props
			switch {
			case ch.Op == connector.OpCreate:
				creates = append(creates, i)
			case !validID(ch.ID):
				w.results[i].Err = fmt.Errorf("update contact %q: %w", ch.ID, connector.ErrNotFound)
			case len(props) > 0:
				updates = append(updates, i)
			}
		case connector.OpDelete:
			if !validID(ch.ID) {
				w.results[i].Err = fmt.Errorf("delete contact %q: %w", ch.ID, connector.ErrNotFound)
				continue
			}
			deletes = append(deletes, i)
		default:
			w.results[i].Err = fmt.Errorf("change %d: %w: unknown operation %d", i, connector.ErrInvalidChange, ch.Op)
		}
	}
	// Updates and archives are safe to repeat; creates come last.
	steps := []struct {
		idx  []int
		send func(context.Context, []int) error
	}{{updates, w.sendUpdates}, {deletes, w.sendArchives}, {creates, w.sendCreates}}
	for _, st := range steps {
		for _, chunk := range chunks(st.idx, func(i int) string { return changes[i].ID }) {
			if err := w.narrow(ctx, chunk, st.send); err != nil {
				if !w.created {
					return nil, err
				}
				for _, i := range chunk {
					if !w.done[i] {
						w.fail(i, err)
					}
				}
			}
		}
	}
	return w.results, nil
}

// validID reports whether id can be a contact id (a decimal number).
func validID(id string) bool {
	n, ok := parseInt(id)
	return ok && n > 0
}

// chunks splits idx into groups of at most 100 in which no id repeats
// (HubSpot refuses duplicate ids in one batch), keeping the order.
func chunks(idx []int, id func(int) string) [][]int {
	var out [][]int
	var cur []int
	seen := map[string]bool{}
	for _, i := range idx {
		k := id(i)
		if len(cur) == maxBatchInputs || (k != "" && seen[k]) {
			out = append(out, cur)
			cur, seen = nil, map[string]bool{}
		}
		cur = append(cur, i)
		if k != "" {
			seen[k] = true
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// narrow sends idx; when HubSpot refuses the whole call because of some
// inputs, it sets those inputs' errors (found by the ids or trace ids
// the error names, else by halving the call) and sends the others again.
func (w *writeRun) narrow(ctx context.Context, idx []int, send func(context.Context, []int) error) error {
	err := send(ctx, idx)
	var he *Error
	if err == nil || errors.Is(err, ErrOutcomeUnknown) || !errors.As(err, &he) || !he.itemFault() {
		return err
	}
	named := map[int]bool{}
	for _, id := range he.IDs() {
		for _, i := range idx {
			if w.changes[i].ID == id {
				named[i] = true
			}
		}
	}
	for _, t := range he.TraceIDs() {
		if i, ok := parseInt(t); ok && contains(idx, int(i)) {
			named[int(i)] = true
		}
	}
	if len(named) == 0 && len(idx) > 1 {
		mid := len(idx) / 2
		if err := w.narrow(ctx, idx[:mid], send); err != nil {
			return err
		}
		return w.narrow(ctx, idx[mid:], send)
	}
	var rest []int
	for _, i := range idx {
		if named[i] || len(named) == 0 {
			w.fail(i, w.itemErr(i, he))
		} else {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return w.narrow(ctx, rest, send)
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// fail settles change i with err, marked as the connector contract's
// refusal when HubSpot refused it with a definite answer.
func (w *writeRun) fail(i int, err error) {
	w.results[i].Err = refusal(err)
	w.done[i] = true
}

// succeed settles change i as applied to contact id.
func (w *writeRun) succeed(i int, id string) {
	w.results[i].ID = id
	w.done[i] = true
}

func (w *writeRun) itemErr(i int, err error) error {
	ch := w.changes[i]
	if ch.Op == connector.OpCreate {
		return fmt.Errorf("create contact: %w", err)
	}
	return fmt.Errorf("%s contact %s: %w", ch.Op, ch.ID, err)
}

// errorsByKey files a batch answer's errors under the ids (or trace ids)
// they name; those naming none go under "".
func errorsByKey(errs []wireError, status int, route string, trace bool) map[string]*Error {
	out := map[string]*Error{}
	for _, we := range errs {
		e := we.toError(status, route)
		keys := e.IDs()
		if trace {
			keys = e.TraceIDs()
		}
		if len(keys) == 0 {
			keys = []string{""}
		}
		for _, k := range keys {
			if _, dup := out[k]; !dup {
				out[k] = e
			}
		}
	}
	return out
}

func (w *writeRun) sendUpdates(ctx context.Context, idx []int) error {
	req := batchRequest{}
	for _, i := range idx {
		req.Inputs = append(req.Inputs, batchInput{ID: w.changes[i].ID, Properties: w.props[i]})
	}
	var ans batchAnswer
	cl := call{method: http.MethodPost, path: batchPath + "update", body: req, idempotent: true}
	status, err := w.s.c.do(ctx, cl, &ans)
	if err != nil {
		return fmt.Errorf("update %d contacts: %w", len(idx), err)
	}
	w.settle(idx, ans, status, cl.route())
	w.s.log.WithFields(logrus.Fields{logfield.Operation: "update", logfield.Inputs: len(idx), logfield.Errors: len(ans.Errors)}).Debug("hubspot batch written")
	return nil
}

// settle sets the results of an update or archive answer: an input
// fails when an error names its id, or (if no error names any id) when
// the answer has errors and its id is not among the results.
func (w *writeRun) settle(idx []int, ans batchAnswer, status int, route string) {
	if len(ans.Errors) == 0 {
		for _, i := range idx {
			if !w.done[i] {
				w.succeed(i, w.changes[i].ID)
			}
		}
		return
	}
	byID := errorsByKey(ans.Errors, status, route, false)
	ok := map[string]bool{}
	for _, r := range ans.Results {
		ok[r.ID] = true
	}
	for _, i := range idx {
		id := w.changes[i].ID
		switch e := byID[id]; {
		case w.done[i]:
		case e != nil:
			w.fail(i, w.itemErr(i, e))
		case ok[id]:
			w.succeed(i, id)
		case byID[""] != nil:
			w.fail(i, w.itemErr(i, byID[""]))
		default:
			w.fail(i, w.itemErr(i, errors.New("missing from the batch answer")))
		}
	}
}

// sendArchives archives the contacts of idx that exist. HubSpot's archive
// answers 204 whatever the ids, so they are read first: the missing ones
// fail with connector.ErrNotFound.
func (w *writeRun) sendArchives(ctx context.Context, idx []int) error {
	req := batchRequest{Properties: []string{"hs_object_id"}}
	for _, i := range idx {
		req.Inputs = append(req.Inputs, batchInput{ID: w.changes[i].ID})
	}
	var read batchAnswer
	cl := call{method: http.MethodPost, path: batchPath + "read", body: req, idempotent: true}
	if _, err := w.s.c.do(ctx, cl, &read); err != nil {
		return fmt.Errorf("read %d contacts to archive: %w", len(idx), err)
	}
	live := map[string]bool{}
	for _, r := range read.Results {
		live[r.ID] = true
	}
	archive := batchRequest{}
	for _, i := range idx {
		id := w.changes[i].ID
		if !live[id] {
			w.fail(i, fmt.Errorf("delete contact %s: %w", id, connector.ErrNotFound))
			continue
		}
		archive.Inputs = append(archive.Inputs, batchInput{ID: id})
	}
	if len(archive.Inputs) == 0 {
		return nil
	}
	var ans batchAnswer
	cl = call{method: http.MethodPost, path: batchPath + "archive", body: archive, idempotent: true}
	status, err := w.s.c.do(ctx, cl, &ans)
	if err != nil {
		return fmt.Errorf("archive %d contacts: %w", len(archive.Inputs), err)
	}
	w.settle(idx, ans, status, cl.route())
	w.s.log.WithFields(logrus.Fields{logfield.Operation: "archive", logfield.Inputs: len(archive.Inputs), logfield.Missing: len(idx) - len(archive.Inputs)}).Debug("hubspot batch written")
	return nil
}

// sendCreates creates contacts, each input with its change's index as
// objectWriteTraceId so that HubSpot reports failures per input (207).
func (w *writeRun) sendCreates(ctx context.Context, idx []int) error {
	req := batchRequest{}
	for _, i := range idx {
		req.Inputs = append(req.Inputs, batchInput{ObjectWriteTraceID: strconv.Itoa(i), Properties: w.props[i]})
	}
	var ans batchAnswer
	cl := call{method: http.MethodPost, path: batchPath + "create", body: req}
	status, err := w.s.c.do(ctx, cl, &ans)
	if status >= 200 && status < 300 || errors.Is(err, ErrOutcomeUnknown) {
		w.created = true
	}
	if err != nil {
		return fmt.Errorf("create %d contacts: %w", len(idx), err)
	}
	byTrace := errorsByKey(ans.Errors, status, cl.route(), true)
	pending := map[int]bool{}
	for _, i := range idx {
		if e := byTrace[strconv.Itoa(i)]; e != nil {
			w.fail(i, w.itemErr(i, e))
			continue
		}
		pending[i] = true
	}
	// Results by the trace id HubSpot may echo, then by properties.
	var unmatched []batchResult
	for _, r := range ans.Results {
		i, ok := parseInt(r.ObjectWriteTraceID)
		if ok && pending[int(i)] {
			w.succeed(int(i), r.ID)
			delete(pending, int(i))
			continue
		}
		unmatched = append(unmatched, r)
	}
	for _, i := range idx {
		if !pending[i] {
			continue
		}
		best, bestScore := -1, -1
		for k, r := range unmatched {
			if r.ID == "" {
				continue
			}
			if sc := matchScore(w.props[i], r.Properties); sc > bestScore {
				best, bestScore = k, sc
			}
		}
		if best < 0 {
			if e := byTrace[""]; e != nil {
				w.fail(i, w.itemErr(i, e))
			} else {
				w.fail(i, w.itemErr(i, fmt.Errorf("%w: no result in the batch answer", ErrOutcomeUnknown)))
			}
			continue
		}
		w.succeed(i, unmatched[best].ID)
		unmatched[best].ID = ""
	}
	w.s.log.WithFields(logrus.Fields{logfield.Operation: "create", logfield.Inputs: len(idx), logfield.Errors: len(ans.Errors)}).Debug("hubspot batch written")
	return nil
}

// matchScore counts the properties sent that a created contact shows
// (case and surrounding space aside, as HubSpot may normalise them).
func matchScore(sent map[string]string, got map[string]*string) int {
	n := 0
	for k, v := range sent {
		g := got[k]
		switch {
		case g == nil && v == "":
			n++
		case g != nil && strings.EqualFold(strings.TrimSpace(*g), strings.TrimSpace(v)):
			n++
		}
	}
	return n
}

// toProperties converts record values to HubSpot's property strings: nil
// clears (""), times are ISO 8601 in UTC, lists are ";"-separated (the
// format of multiple checkboxes).
func toProperties(fields map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(fields))
	for k, v := range fields {
		switch t := v.(type) {
		case nil:
			out[k] = ""
		case string:
			out[k] = t
		case bool:
			out[k] = strconv.FormatBool(t)
		case int:
			out[k] = strconv.Itoa(t)
		case int32:
			out[k] = strconv.FormatInt(int64(t), 10)
		case int64:
			out[k] = strconv.FormatInt(t, 10)
		case float64:
			out[k] = strconv.FormatFloat(t, 'f', -1, 64)
		case time.Time:
			if !t.IsZero() {
				out[k] = t.UTC().Format(valueTimeFmt)
			} else {
				out[k] = ""
			}
		case []string:
			out[k] = strings.Join(t, ";")
		default:
			return nil, fmt.Errorf("property %s: %w: unsupported value type %T", k, connector.ErrInvalidChange, v)
		}
	}
	return out, nil
}
