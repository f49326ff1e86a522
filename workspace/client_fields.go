package workspace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/syncd-io/syncd/internal/logfield"
)

// customFields is what the client knows of the workspace's custom fields:
// the form values are written in, and the definitions (by key) once
// loaded.
type customFields struct {
	form        string
	reloadEvery time.Duration // least time between reloads after refusals
	mu          sync.RWMutex
	defs        map[string]CustomFieldDefinition // nil until loaded
	loadedAt    time.Time
	reload      sync.Mutex // one reload at a time
}

// reloadEvery bounds reloads of the definitions after refusals naming a
// custom field: a run of refused records costs one reload, not one each.
const reloadEvery = 30 * time.Second

// FieldValueError is a custom field value that does not fit its field's
// type (a number field given "abc"): the record's, not the service's,
// problem. It wraps ErrInvalidRequest.
type FieldValueError struct {
	Key  string
	Type string
	Err  error
}

func (e *FieldValueError) Error() string {
	return fmt.Sprintf("custom field %q (%s): %v", e.Key, e.Type, e.Err)
}

// Unwrap returns the cause and ErrInvalidRequest.
func (e *FieldValueError) Unwrap() []error { return []error{e.Err, ErrInvalidRequest} }

// CustomFieldValues returns the form the client writes custom field
// values in: ValuesTyped or ValuesArrays.
func (c *Client) CustomFieldValues() string { return c.fields.form }

// LoadCustomFields reads the workspace's custom field definitions
// (GET /v1/contact-custom-fields) and keeps them: from then on, values are
// written in the form of their field's type.
func (c *Client) LoadCustomFields(ctx context.Context) ([]CustomFieldDefinition, error) {
	defs, err := c.CustomFieldDefinitions(ctx)
	if err != nil {
		return nil, err
	}
	m := make(map[string]CustomFieldDefinition, len(defs))
	for _, d := range defs {
		m[d.Key] = d
	}
	c.fields.mu.Lock()
	c.fields.defs, c.fields.loadedAt = m, time.Now()
	c.fields.mu.Unlock()
	return defs, nil
}

// CustomFieldType returns the type of the custom field with key, "" when
// the definitions are not loaded or name no such field.
func (c *Client) CustomFieldType(key string) string {
	c.fields.mu.RLock()
	defer c.fields.mu.RUnlock()
	return c.fields.defs[key].Type
}

// encodeFields returns fs with each value in the client's form for its
// field's type. The text of every value is read, whatever form it came
// in, so callers may give ListValue of the text.
func (c *Client) encodeFields(fs []CustomFieldValue) ([]CustomFieldValue, error) {
	if len(fs) == 0 {
		return fs, nil
	}
	out := make([]CustomFieldValue, len(fs))
	var errs []error
	for i, f := range fs {
		typ := c.CustomFieldType(f.Key)
		v, err := EncodeValue(typ, c.fields.form, f.Value.Text())
		if err != nil {
			errs = append(errs, &FieldValueError{Key: f.Key, Type: typ, Err: err})
		}
		f.Value = v
		out[i] = f
	}
	return out, errors.Join(errs...)
}

// namesCustomField reports whether err is a refusal that names a custom
// field: a 400 or 422 whose errors[] has a path under /customFields, or
// whose title says so.
func namesCustomField(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) || !IsValidation(err) {
		return false
	}
	if strings.Contains(strings.ToLower(ae.Body.Title), "custom field") {
		return true
	}
	for _, fe := range ae.Body.Errors {
		if strings.HasPrefix(strings.TrimPrefix(fe.Path, "/"), "customFields") {
			return true
		}
	}
	return false
}

// refreshAfter reloads the definitions after a refusal naming a custom
// field, at most once per reloadEvery (and only when they were loaded
// before), and reports whether the type of one of keys changed: then the
// request is worth sending again in the new form.
func (c *Client) refreshAfter(ctx context.Context, err error, fs []CustomFieldValue) bool {
	if len(fs) == 0 || !namesCustomField(err) {
		return false
	}
	c.fields.reload.Lock()
	defer c.fields.reload.Unlock()
	c.fields.mu.RLock()
	loaded, recent := c.fields.defs != nil, time.Since(c.fields.loadedAt) < c.fields.reloadEvery
	c.fields.mu.RUnlock()
	if !loaded || recent {
		return false
	}
	before := make([]string, len(fs))
	for i, f := range fs {
		before[i] = c.CustomFieldType(f.Key)
	}
	if _, lerr := c.LoadCustomFields(ctx); lerr != nil {
		c.log.WithError(lerr).Warn("reloading custom field definitions failed")
		return false
	}
	changed := false
	for i, f := range fs {
		changed = changed || c.CustomFieldType(f.Key) != before[i]
	}
	c.log.WithField(logfield.Changed, changed).Info("custom field definitions reloaded after a refusal naming a custom field")
	return changed
}
