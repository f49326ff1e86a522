package salesforceemu

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ErrNoRecord is returned by the test-side methods for an unknown id.
var ErrNoRecord = errors.New("salesforceemu: no such record")

func sortStrings(s []string) { sort.Strings(s) }

func (s *Server) objectOf(name string) *object {
	o := s.objects[strings.ToLower(name)]
	if o == nil {
		panic(fmt.Sprintf("salesforceemu: unknown object %q", name))
	}
	return o
}

// normalize keys a test's field map by lower-case name; unknown fields
// panic (a mistake of the test).
func (o *object) normalize(fields map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range fields {
		lk := strings.ToLower(k)
		if _, ok := o.fields[lk]; !ok {
			panic(fmt.Sprintf("salesforceemu: %s has no field %q", o.name, k))
		}
		if v != nil {
			v = fmt.Sprint(v)
		}
		out[lk] = v
	}
	return out
}

// Add creates a record as a person would in Salesforce's UI: the fields
// are not checked. It returns the 18-character id.
func (s *Server) Add(objectName string, fields map[string]any) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objectOf(objectName)
	return s.insertLocked(o, o.normalize(fields))
}

func (s *Server) insertLocked(o *object, vals map[string]any) string {
	now := s.nowLocked()
	for k, f := range o.fields {
		if f.Default != "" {
			if _, ok := vals[k]; !ok {
				vals[k] = f.Default
			}
		}
	}
	r := &record{id: s.newIDLocked(o), values: vals, created: now, modified: now, modstamp: now}
	o.records[id15(r.id)] = r
	return r.id
}

// Update changes fields of a live record as a person would.
func (s *Server) Update(id string, fields map[string]any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, r := s.liveLocked(id)
	if r == nil {
		return fmt.Errorf("update %s: %w", id, ErrNoRecord)
	}
	s.applyLocked(r, o.normalize(fields))
	return nil
}

func (s *Server) applyLocked(r *record, vals map[string]any) {
	for k, v := range vals {
		r.values[k] = v
	}
	now := s.nowLocked()
	r.modified, r.modstamp = now, now
}

// Touch moves a record's SystemModstamp without changing a field, as
// Salesforce's own processes (a roll-up, a sharing recalculation) do.
func (s *Server) Touch(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, r := s.liveLocked(id)
	if r == nil {
		return fmt.Errorf("touch %s: %w", id, ErrNoRecord)
	}
	r.modstamp = s.nowLocked()
	return nil
}

// Delete moves a live record to the Recycle Bin.
func (s *Server) Delete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, r := s.liveLocked(id)
	if r == nil {
		return fmt.Errorf("delete %s: %w", id, ErrNoRecord)
	}
	s.deleteLocked(o, r)
	return nil
}

func (s *Server) deleteLocked(o *object, r *record) {
	now := s.nowLocked()
	r.deleted, r.deleteAt, r.modstamp = true, now, now
	o.deleteLog = append(o.deleteLog, deletion{id: r.id, at: now})
}

// Merge merges the victims into the master as Salesforce's merge does
// (SOAP merge(), Apex merge, the UI): each victim is deleted with its
// MasterRecordId set to the master, whose SystemModstamp moves too. At
// most two victims, of the master's object.
func (s *Server) Merge(masterID string, victims ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(victims) == 0 || len(victims) > 2 {
		return fmt.Errorf("merge: %d records to merge, want 1 or 2", len(victims))
	}
	o, m := s.liveLocked(masterID)
	if m == nil {
		return fmt.Errorf("merge into %s: %w", masterID, ErrNoRecord)
	}
	for _, v := range victims {
		vo, r := s.liveLocked(v)
		if r == nil || vo != o || r == m {
			return fmt.Errorf("merge %s into %s: %w", v, masterID, ErrNoRecord)
		}
	}
	now := s.nowLocked()
	m.modified, m.modstamp = now, now
	for _, v := range victims {
		_, r := s.liveLocked(v)
		r.master = m.id
		s.deleteLocked(o, r)
	}
	return nil
}

// Undelete restores a record from the Recycle Bin.
func (s *Server) Undelete(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.objects {
		if r := o.records[id15(id)]; r != nil && r.deleted && !r.purged {
			now := s.nowLocked()
			r.deleted, r.master, r.modified, r.modstamp = false, "", now, now
			return nil
		}
	}
	return fmt.Errorf("undelete %s: %w", id, ErrNoRecord)
}

// EmptyRecycleBin purges the records deleted before t: queryAll no longer
// shows them, and getDeleted's earliestDateAvailable moves to the newest
// purged deletion when purgeLog is set.
func (s *Server) EmptyRecycleBin(t time.Time, purgeLog bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.objects {
		for _, r := range o.records {
			if r.deleted && r.deleteAt.Before(t) {
				r.purged = true
			}
		}
		if !purgeLog {
			continue
		}
		kept := o.deleteLog[:0]
		for _, d := range o.deleteLog {
			if d.at.Before(t) {
				if d.at.After(o.earliest) {
					o.earliest = d.at
				}
				continue
			}
			kept = append(kept, d)
		}
		o.deleteLog = kept
	}
}

// liveLocked finds a live (not deleted) record by id.
func (s *Server) liveLocked(id string) (*object, *record) {
	k := id15(id)
	if k == "" {
		return nil, nil
	}
	for _, o := range s.objects {
		if r := o.records[k]; r != nil && !r.deleted && !r.purged {
			return o, r
		}
	}
	return nil, nil
}
