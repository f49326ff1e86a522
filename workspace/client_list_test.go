package workspace

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

// pagedContacts serves GET /v1/contacts over contacts like the service:
// the filters select, maxResults (default 10, capped at serverMax) sizes
// the page, and pageToken is the offset of the next page.
func pagedContacts(t testing.TB, contacts []Contact, serverMax int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		ext, src := q["externalIds"], q["sources"]
		if len(ext) > MaxListFilterValues || len(src) > MaxListFilterValues {
			t.Errorf("server got %d externalIds and %d sources", len(ext), len(src))
			status(http.StatusBadRequest)(w, r)
			return
		}
		var match []Contact
		for _, c := range contacts {
			if len(ext) > 0 && (c.ExternalID == nil || !slices.Contains(ext, *c.ExternalID)) {
				continue
			}
			if len(src) > 0 && (c.Source == nil || !slices.Contains(src, *c.Source)) {
				continue
			}
			match = append(match, c)
		}
		size := DefaultPageSize
		if v := q.Get("maxResults"); v != "" {
			size, _ = strconv.Atoi(v)
		}
		size = min(size, serverMax)
		off, _ := strconv.Atoi(q.Get("pageToken"))
		end := min(off+size, len(match))
		page := ContactPage{Data: match[off:end], TotalItems: len(match) + 3} // totalItems is inaccurate on purpose
		if end < len(match) {
			page.NextPageToken = ptr(strconv.Itoa(end))
		}
		writeJSON(w, http.StatusOK, page)
	}
}

// makeContacts returns n contacts with externalId ext-<i>, half of them
// (the even ones) with source custom-a, the others custom-b.
func makeContacts(n int) []Contact {
	out := make([]Contact, n)
	for i := range out {
		src := "custom-a"
		if i%2 == 1 {
			src = "custom-b"
		}
		out[i] = Contact{ID: fmt.Sprintf("c_%03d", i), ExternalID: ptr(fmt.Sprintf("ext-%d", i)), Source: ptr(src)}
	}
	return out
}

func ids(cs []Contact) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestListContactsQueryEncoding(t *testing.T) {
	tests := []struct {
		name string
		p    ListContactsParams
		want string // raw query the server sees
	}{
		{"no parameters", ListContactsParams{}, ""},
		{"repeated external ids", ListContactsParams{ExternalIDs: []string{"a", "b"}}, "externalIds=a&externalIds=b"},
		{"sources and ids", ListContactsParams{ExternalIDs: []string{"a"}, Sources: []string{"custom-x", "custom-y"}},
			"externalIds=a&sources=custom-x&sources=custom-y"},
		{"page size and token", ListContactsParams{MaxResults: 50, PageToken: "tok/1"}, "maxResults=50&pageToken=tok%2F1"},
		{"values escaped", ListContactsParams{ExternalIDs: []string{"a&b=c", "ü 1"}}, "externalIds=a%26b%3Dc&externalIds=%C3%BC+1"},
		{"exactly fifty values", ListContactsParams{ExternalIDs: fifty("e")}, encodeAll("externalIds", fifty("e"))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var raw string
			f := newFakeAPI(t, map[string]http.HandlerFunc{RouteListContacts: func(w http.ResponseWriter, r *http.Request) {
				raw = r.URL.RawQuery
				writeJSON(w, http.StatusOK, ContactPage{Data: []Contact{}})
			}})
			c := newTestClient(t, testClientOptions(t, f.URL))
			if _, err := c.ListContacts(context.Background(), tc.p); err != nil {
				t.Fatal(err)
			}
			if raw != tc.want {
				t.Errorf("query = %q\nwant    %q", raw, tc.want)
			}
		})
	}
}

func fifty(prefix string) []string {
	out := make([]string, MaxListFilterValues)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", prefix, i)
	}
	return out
}

func encodeAll(key string, vs []string) string {
	s := ""
	for i, v := range vs {
		if i > 0 {
			s += "&"
		}
		s += key + "=" + v
	}
	return s
}

func TestListContactsRefusedBeforeAnyCall(t *testing.T) {
	tests := []struct {
		name string
		p    ListContactsParams
	}{
		{"51 external ids", ListContactsParams{ExternalIDs: append(fifty("e"), "one-more")}},
		{"51 sources", ListContactsParams{Sources: append(fifty("s"), "one-more")}},
		{"page size 51", ListContactsParams{MaxResults: MaxPageSize + 1}},
		{"negative page size", ListContactsParams{MaxResults: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t, map[string]http.HandlerFunc{RouteListContacts: pagedContacts(t, nil, MaxPageSize)})
			c := newTestClient(t, testClientOptions(t, f.URL))
			_, err := c.ListContacts(context.Background(), tc.p)
			if !errors.Is(err, ErrInvalidRequest) || !IsValidation(err) {
				t.Errorf("ListContacts err = %v, want ErrInvalidRequest", err)
			}
			var iterErr error
			n := 0
			for _, err := range c.Contacts(context.Background(), tc.p) {
				n++
				iterErr = err
			}
			if n != 1 || !errors.Is(iterErr, ErrInvalidRequest) {
				t.Errorf("Contacts yielded %d elements, last error %v; want one ErrInvalidRequest", n, iterErr)
			}
			if f.TotalHits() != 0 || c.Calls() != 0 {
				t.Errorf("server hits %d, client calls %d; want none", f.TotalHits(), c.Calls())
			}
		})
	}
}

func TestContactsIteratesToTheLastPage(t *testing.T) {
	all := makeContacts(123)
	tests := []struct {
		name      string
		p         ListContactsParams
		serverMax int
		want      []Contact
		wantCalls int
		wantSize  string // maxResults sent
	}{
		{"default pages of fifty", ListContactsParams{}, MaxPageSize, all, 3, "50"},
		{"caller's page size", ListContactsParams{MaxResults: 20}, MaxPageSize, all, 7, "20"},
		{"server pages smaller than asked", ListContactsParams{}, 10, all, 13, "50"},
		{"filtered by source", ListContactsParams{Sources: []string{"custom-b"}}, MaxPageSize, everyOther(all, 1), 2, "50"},
		{"exact multiple of the page size", ListContactsParams{MaxResults: 41}, MaxPageSize, all, 3, "41"},
		{"nothing matches", ListContactsParams{ExternalIDs: []string{"nope"}}, MaxPageSize, nil, 1, "50"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t, map[string]http.HandlerFunc{RouteListContacts: pagedContacts(t, all, tc.serverMax)})
			c := newTestClient(t, testClientOptions(t, f.URL))
			var got []Contact
			for ct, err := range c.Contacts(context.Background(), tc.p) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ct)
			}
			if !reflect.DeepEqual(ids(got), ids(tc.want)) {
				t.Errorf("got %d contacts %v\nwant %d", len(got), ids(got), len(tc.want))
			}
			if n := f.Hits(RouteListContacts); n != tc.wantCalls {
				t.Errorf("list calls = %d, want %d", n, tc.wantCalls)
			}
			for _, r := range f.Requests() {
				if got := r.Query["maxResults"]; len(got) != 1 || got[0] != tc.wantSize {
					t.Errorf("maxResults = %v, want %s", got, tc.wantSize)
				}
			}
		})
	}
}

func everyOther(cs []Contact, from int) []Contact {
	var out []Contact
	for i := from; i < len(cs); i += 2 {
		out = append(out, cs[i])
	}
	return out
}

func TestContactsStopsEarlyAndOnErrors(t *testing.T) {
	all := makeContacts(120)
	t.Run("break stops paging", func(t *testing.T) {
		f := newFakeAPI(t, map[string]http.HandlerFunc{RouteListContacts: pagedContacts(t, all, MaxPageSize)})
		c := newTestClient(t, testClientOptions(t, f.URL))
		n := 0
		for _, err := range c.Contacts(context.Background(), ListContactsParams{}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == 55 {
				break
			}
		}
		if got := f.Hits(RouteListContacts); got != 2 {
			t.Errorf("list calls = %d, want 2", got)
		}
	})
	t.Run("error on a later page", func(t *testing.T) {
		pages := pagedContacts(t, all, MaxPageSize)
		f := newFakeAPI(t, map[string]http.HandlerFunc{RouteListContacts: sequence(pages, status(http.StatusForbidden))})
		c := newTestClient(t, testClientOptions(t, f.URL))
		n, errs := 0, 0
		var last error
		for _, err := range c.Contacts(context.Background(), ListContactsParams{}) {
			if err != nil {
				errs++
				last = err
				continue
			}
			n++
		}
		if n != 50 || errs != 1 || !IsUnauthorized(last) {
			t.Errorf("got %d contacts and %d errors (%v); want 50 and one 403", n, errs, last)
		}
	})
	t.Run("page token that does not advance", func(t *testing.T) {
		f := newFakeAPI(t, map[string]http.HandlerFunc{RouteListContacts: func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, ContactPage{Data: all[:1], NextPageToken: ptr("same")})
		}})
		c := newTestClient(t, testClientOptions(t, f.URL))
		var last error
		for _, err := range c.Contacts(context.Background(), ListContactsParams{}) {
			last = err
		}
		if !errors.Is(last, errPagingLoop) {
			t.Errorf("last = %v, want a paging loop error", last)
		}
		if got := f.Hits(RouteListContacts); got != 2 {
			t.Errorf("list calls = %d, want 2", got)
		}
	})
}

func TestContactsByExternalIDs(t *testing.T) {
	all := makeContacts(130)
	var askFor []string
	for i := range 125 { // 120 known ids, 5 unknown, plus duplicates and an empty one
		askFor = append(askFor, fmt.Sprintf("ext-%d", i*1))
	}
	askFor = append(askFor, "ext-3", "ext-3", "", "unknown")
	tests := []struct {
		name      string
		source    string
		want      []Contact
		wantCalls int
	}{
		// 126 distinct ids: chunks of 50, 50, 26; the server's pages of 20
		// make 3 + 3 + 2 calls; with the source filter 2 + 2 + 1.
		{"any source", "", all[:125], 8},
		{"one source", "custom-a", everyOther(all[:125], 0), 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAPI(t, map[string]http.HandlerFunc{RouteListContacts: pagedContacts(t, all, 20)})
			c := newTestClient(t, testClientOptions(t, f.URL))
			got, err := c.ContactsByExternalIDs(context.Background(), tc.source, askFor)
			if err != nil {
				t.Fatal(err)
			}
			gotIDs, wantIDs := ids(got), ids(tc.want)
			slices.Sort(gotIDs)
			slices.Sort(wantIDs)
			if !reflect.DeepEqual(gotIDs, wantIDs) {
				t.Errorf("got %d contacts, want %d\n got %v", len(gotIDs), len(wantIDs), gotIDs)
			}
			if n := f.Hits(RouteListContacts); n != tc.wantCalls {
				t.Errorf("list calls = %d, want %d", n, tc.wantCalls)
			}
			seen := map[string]int{}
			for _, r := range f.Requests() {
				if n := len(r.Query["externalIds"]); n == 0 || n > MaxListFilterValues {
					t.Errorf("a call carried %d externalIds", n)
				}
				if r.Query.Get("pageToken") == "" {
					for _, v := range r.Query["externalIds"] {
						seen[v]++
					}
				}
				wantSrc := []string(nil)
				if tc.source != "" {
					wantSrc = []string{tc.source}
				}
				if !reflect.DeepEqual(r.Query["sources"], wantSrc) {
					t.Errorf("sources = %v, want %v", r.Query["sources"], wantSrc)
				}
			}
			if len(seen) != 126 {
				t.Errorf("%d distinct ids asked for, want 126", len(seen))
			}
			for v, n := range seen {
				if n != 1 || v == "" {
					t.Errorf("id %q asked for %d times", v, n)
				}
			}
		})
	}
	t.Run("no ids makes no call", func(t *testing.T) {
		f := newFakeAPI(t, map[string]http.HandlerFunc{RouteListContacts: pagedContacts(t, all, 20)})
		c := newTestClient(t, testClientOptions(t, f.URL))
		got, err := c.ContactsByExternalIDs(context.Background(), "", []string{"", ""})
		if err != nil || len(got) != 0 || f.TotalHits() != 0 {
			t.Errorf("got %v, %v after %d calls", got, err, f.TotalHits())
		}
	})
}
