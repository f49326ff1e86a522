package pipedrive

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/syncd-io/syncd/connector"
)

// maxIDs is the most ids one list call takes.
const maxIDs = 100

// getPersons reads persons by id; ids without a live person are left out.
func (s *Source) getPersons(ctx context.Context, ids []string) (map[string]person, error) {
	out := map[string]person{}
	var valid []string
	for _, id := range ids {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil && n > 0 && !slices.Contains(valid, id) {
			valid = append(valid, id)
		}
	}
	// A page holds pageSize persons: asking for more ids at once would
	// leave some out, as if they did not exist.
	for chunk := range slices.Chunk(valid, min(maxIDs, s.pageSize)) {
		pg, err := s.listPersons(ctx, url.Values{"ids": {strings.Join(chunk, ",")}})
		if err != nil {
			return nil, fmt.Errorf("read persons by id: %w", err)
		}
		for _, p := range pg.Data {
			if !p.IsDeleted {
				out[strconv.FormatInt(p.ID, 10)] = p
			}
		}
	}
	return out, nil
}

// Write applies changes: updates, then deletes, then creates (the one
// write not safe to repeat comes last). See the package comment.
func (s *Source) Write(ctx context.Context, changes []connector.Change) ([]connector.WriteResult, error) {
	res := make([]connector.WriteResult, len(changes))
	if len(changes) == 0 {
		return res, nil
	}
	if err := s.prepare(ctx, changes); err != nil {
		return nil, err
	}
	var updates []string
	for _, c := range changes {
		if c.Op == connector.OpUpdate {
			updates = append(updates, c.ID)
		}
	}
	current, err := s.getPersons(ctx, updates)
	if err != nil {
		return nil, err
	}
	created := false
	for _, op := range []connector.Op{connector.OpUpdate, connector.OpDelete, connector.OpCreate} {
		for i, c := range changes {
			if c.Op != op {
				continue
			}
			var whole error
			if res[i], whole = s.apply(ctx, c, current); whole != nil {
				if !created {
					return nil, whole // nothing unsafe to repeat was applied: the caller retries the whole Write
				}
				res[i].Err = whole
			}
			created = created || op == connector.OpCreate
		}
	}
	return res, nil
}

// prepare reads what the changes need once: the custom field definitions.
func (s *Source) prepare(ctx context.Context, changes []connector.Change) error {
	for _, c := range changes {
		for f := range c.Fields {
			if strings.HasPrefix(f, customPrefix) {
				return s.defs.load(ctx, s.c, s.now())
			}
		}
	}
	return nil
}

// apply makes one change. An error is returned when the whole call
// failed (limits, outage, auth); the change's own failure is in the
// result.
func (s *Source) apply(ctx context.Context, c connector.Change, current map[string]person) (connector.WriteResult, error) {
	res := connector.WriteResult{ID: c.ID}
	switch c.Op {
	case connector.OpUpdate:
		p, ok := current[c.ID]
		if !ok {
			res.Err = fmt.Errorf("update person %s: %w", c.ID, connector.ErrNotFound)
			return res, nil
		}
		if !c.IfUnchangedSince.IsZero() && !unchangedSince(p, c.IfUnchangedSince) {
			res.Err = fmt.Errorf("update person %s: changed at %s, read at %s: %w", c.ID, p.UpdateTime, c.IfUnchangedSince.UTC().Format(timePrecision), connector.ErrChanged)
			return res, nil
		}
		body, err := s.body(ctx, c.Fields, &p)
		if err != nil {
			res.Err = fmt.Errorf("update person %s: %w", c.ID, err)
			return res, passThrough(err)
		}
		if len(body) == 0 {
			return res, nil
		}
		var ans struct {
			Data *person `json:"data"`
		}
		err = s.c.do(ctx, call{method: http.MethodPatch, path: "/api/v2/persons/" + c.ID, body: body, route: "PATCH /api/v2/persons/{id}", idempotent: true}, &ans)
		if err == nil && ans.Data != nil && ans.Data.ID != 0 {
			current[c.ID] = *ans.Data // a later change of the same person builds on this one
		}
		return s.outcome(res, "update person "+c.ID, err)
	case connector.OpDelete:
		err := s.c.do(ctx, call{method: http.MethodDelete, path: "/api/v2/persons/" + c.ID, route: "DELETE /api/v2/persons/{id}", idempotent: true}, nil)
		return s.outcome(res, "delete person "+c.ID, err)
	case connector.OpCreate:
		return s.create(ctx, c)
	}
	res.Err = fmt.Errorf("write: unknown operation %d", c.Op)
	return res, nil
}

func (s *Source) create(ctx context.Context, c connector.Change) (connector.WriteResult, error) {
	var res connector.WriteResult
	body, err := s.body(ctx, c.Fields, nil)
	if err != nil {
		res.Err = fmt.Errorf("create person: %w", err)
		return res, passThrough(err)
	}
	var ans struct {
		Data struct {
			ID int64 `json:"id"`
		} `json:"data"`
	}
	err = s.c.do(ctx, call{method: http.MethodPost, path: "/api/v2/persons", body: body, route: "POST /api/v2/persons"}, &ans)
	if err == nil && ans.Data.ID == 0 {
		err = fmt.Errorf("%w: the answer names no person id", ErrOutcomeUnknown)
	}
	if err != nil && !errors.Is(err, ErrOutcomeUnknown) {
		// Refused or never sent: not applied.
		return s.outcome(res, "create person", err)
	}
	if err != nil {
		res.Err = fmt.Errorf("create person: %w", err)
		return res, nil
	}
	res.ID = strconv.FormatInt(ans.Data.ID, 10)
	return res, nil
}

// outcome sorts a call's error: a refusal of this change (see
// Error.refused) is the change's; anything else (429, 5xx, an outcome
// unknown, 401) failed the whole call, which the caller tries again.
func (s *Source) outcome(res connector.WriteResult, what string, err error) (connector.WriteResult, error) {
	if err == nil {
		return res, nil
	}
	var pe *Error
	if errors.As(err, &pe) && pe.refused() {
		// A definite refusal (a 400 validation error): permanent, so the
		// change's own, as a *connector.RefusedError naming Pipedrive's
		// message; a 404 stays ErrNotFound.
		res.Err = fmt.Errorf("%s: %w", what, refusal(err))
		return res, nil
	}
	return res, fmt.Errorf("%s: %w", what, err)
}

// passThrough returns the errors of building a body that are not the
// change's own (reading organizations failed).
func passThrough(err error) error {
	if errors.Is(err, connector.ErrRefused) {
		return nil
	}
	return err
}

// timePrecision is update_time's precision in API v2: RFC 3339 with
// milliseconds ("2024-01-01T00:00:00.000Z"); API v1 gave whole seconds.
const timePrecision = "2006-01-02T15:04:05.000Z07:00"

// unchangedSince reports whether p's update_time is the one read (at),
// compared at the precision Pipedrive gives: milliseconds. A time read
// with a finer precision (none is given) compares by its milliseconds.
func unchangedSince(p person, at time.Time) bool {
	t, ok := parseTime(p.UpdateTime)
	return ok && t.Truncate(time.Millisecond).Equal(at.UTC().Truncate(time.Millisecond))
}
