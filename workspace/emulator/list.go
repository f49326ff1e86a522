package emulator

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/syncd-io/syncd/workspace"
)

// listPage is the answer of GET /v1/contacts.
type listPage struct {
	Data          []workspace.Contact `json:"data"`
	TotalItems    int                 `json:"totalItems"`
	NextPageToken *string             `json:"nextPageToken"`
}

// listQuery is a validated list query.
type listQuery struct {
	externalIDs map[string]bool
	extOrder    []string
	sources     map[string]bool
	max         int
	after       uint64 // seq of the last contact of the previous page
}

// filterValues returns the values of a repeatable filter, accepting both
// name=a&name=b and name[]=a.
func filterValues(q url.Values, name string) []string {
	return append(append([]string{}, q[name]...), q[name+"[]"]...)
}

// parseListQuery validates the query of GET /v1/contacts.
func parseListQuery(q url.Values) (listQuery, []workspace.FieldError) {
	var errs []workspace.FieldError
	lq := listQuery{max: workspace.DefaultPageSize}
	filter := func(name string, maxLen int) map[string]bool {
		vals := filterValues(q, name)
		if len(vals) == 0 {
			return nil
		}
		arr := array(str(1, maxLen), 0, workspace.MaxListFilterValues)
		generic := make([]any, len(vals))
		for i, v := range vals {
			generic[i] = v
		}
		arr.validate("/"+name, generic, &errs)
		set := make(map[string]bool, len(vals))
		for _, v := range vals {
			if !set[v] && name == "externalIds" {
				lq.extOrder = append(lq.extOrder, v)
			}
			set[v] = true
		}
		return set
	}
	lq.externalIDs = filter("externalIds", workspace.MaxExternalIDLen)
	lq.sources = filter("sources", workspace.MaxSourceLenUpdate)
	if vals := q["maxResults"]; len(vals) > 0 {
		sch := &node{typ: "integer"}
		n, err := strconv.Atoi(vals[len(vals)-1])
		switch {
		case err != nil:
			errs = append(errs, workspace.FieldError{Path: "/maxResults", Message: "Expected integer", Value: vals[len(vals)-1], Schema: sch.schemaMap()})
		case n < 1:
			errs = append(errs, workspace.FieldError{Path: "/maxResults", Message: "Expected integer to be greater or equal to 1", Value: n,
				Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": workspace.MaxPageSize}})
		case n > workspace.MaxPageSize:
			errs = append(errs, workspace.FieldError{Path: "/maxResults", Message: fmt.Sprintf("Expected integer to be less or equal to %d", workspace.MaxPageSize), Value: n,
				Schema: map[string]any{"type": "integer", "minimum": 1, "maximum": workspace.MaxPageSize}})
		default:
			lq.max = n
		}
	}
	if tok := q.Get("pageToken"); tok != "" {
		seq, ok := decodePageToken(tok)
		if !ok {
			errs = append(errs, workspace.FieldError{Path: "/pageToken", Message: "Expected a nextPageToken of a previous page", Value: tok,
				Schema: map[string]any{"type": "string"}})
		}
		lq.after = seq
	}
	return lq, errs
}

const pageTokenPrefix = "after:"

func encodePageToken(seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pageTokenPrefix + strconv.FormatUint(seq, 10)))
}

func decodePageToken(tok string) (uint64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return 0, false
	}
	rest, ok := strings.CutPrefix(string(b), pageTokenPrefix)
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseUint(rest, 10, 64)
	return seq, err == nil
}

// match reports whether a contact passes the filters.
func (lq *listQuery) match(c *workspace.Contact) bool {
	if lq.externalIDs != nil && (c.ExternalID == nil || !lq.externalIDs[*c.ExternalID]) {
		return false
	}
	if lq.sources != nil && (c.Source == nil || !lq.sources[*c.Source]) {
		return false
	}
	return true
}

// listContacts serves GET /v1/contacts. Contacts come in creation order;
// the page token is the position after the last contact of a page, so
// that paging is stable while contacts are created (they come last) or
// deleted (they are skipped).
func (e *Emulator) listContacts(r *http.Request) answer {
	lq, errs := parseListQuery(r.URL.Query())
	if len(errs) > 0 {
		return fail(e.validationError(areaContacts, errs))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.state
	page := listPage{Data: []workspace.Contact{}}
	var rest []*contactRec // candidates after the cursor, in order, when indexed
	if lq.externalIDs != nil {
		for _, id := range lq.extOrder {
			for _, rec := range s.byExternal[id] {
				s.scanned++
				if lq.match(&rec.c) {
					page.TotalItems++
					if rec.seq > lq.after {
						rest = append(rest, rec)
					}
				}
			}
		}
		sort.Slice(rest, func(i, j int) bool { return rest[i].seq < rest[j].seq })
		for _, rec := range rest[:min(len(rest), lq.max)] {
			page.Data = append(page.Data, cloneContact(rec.c))
		}
		if len(rest) > lq.max {
			tok := encodePageToken(rest[lq.max-1].seq)
			page.NextPageToken = &tok
		}
		return ok(http.StatusOK, page)
	}
	if lq.sources != nil {
		for src := range lq.sources {
			page.TotalItems += s.bySource[sourceKey(&src)]
		}
	} else {
		page.TotalItems = s.live
	}
	var last uint64
	for i := s.after(lq.after); i < len(s.order); i++ {
		rec := s.order[i]
		s.scanned++
		if rec.deleted || !lq.match(&rec.c) {
			continue
		}
		if len(page.Data) == lq.max {
			tok := encodePageToken(last)
			page.NextPageToken = &tok
			break
		}
		page.Data = append(page.Data, cloneContact(rec.c))
		last = rec.seq
	}
	return ok(http.StatusOK, page)
}
