package emulator_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/workspace"
	"github.com/syncd-io/syncd/workspace/emulator"
)

type page struct {
	Data          []workspace.Contact `json:"data"`
	TotalItems    int                 `json:"totalItems"`
	NextPageToken *string             `json:"nextPageToken"`
}

// listPage gets one page with query q.
func listPage(t *testing.T, base, q string) page {
	t.Helper()
	r := call(t, base, "GET", "/v1/contacts?"+q, nil)
	if r.status != http.StatusOK {
		t.Fatalf("GET /v1/contacts?%s: %d %s", q, r.status, r.body)
	}
	var p page
	if err := jsonUnmarshal(r.body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Data == nil {
		t.Fatalf("data is null, want a list: %s", r.body)
	}
	return p
}

// listAll follows nextPageToken to the end, from the page of start when
// given, returning the first names in order and the number of pages.
func listAll(t *testing.T, base, q string, start ...string) (names []string, pages int) {
	t.Helper()
	tok := ""
	if len(start) > 0 {
		tok = start[0]
	}
	for {
		qq := q
		if tok != "" {
			qq += "&pageToken=" + url.QueryEscape(tok)
		}
		p := listPage(t, base, qq)
		pages++
		for _, c := range p.Data {
			names = append(names, *c.DefaultFields.FirstName)
		}
		if p.NextPageToken == nil {
			return names, pages
		}
		if *p.NextPageToken == "" || pages > 1000 {
			t.Fatalf("bad nextPageToken %q after %d pages", *p.NextPageToken, pages)
		}
		tok = *p.NextPageToken
	}
}

// seedList creates 10 contacts of source custom-a (externalIds a-0..a-9),
// 8 of custom-b (b-0..b-7) and 5 in the app (no source), interleaved.
func seedList(t *testing.T, base string) []string {
	t.Helper()
	var names []string
	for i := 0; i < 10; i++ {
		n := fmt.Sprintf("a%d", i)
		createContact(t, base, person(n, map[string]any{"source": "custom-a", "externalId": fmt.Sprintf("a-%d", i)}))
		names = append(names, n)
		if i < 8 {
			n := fmt.Sprintf("b%d", i)
			createContact(t, base, person(n, map[string]any{"source": "custom-b", "externalId": fmt.Sprintf("b-%d", i)}))
			names = append(names, n)
		}
		if i < 5 {
			n := fmt.Sprintf("p%d", i)
			call(t, base, "POST", "/_emulator/app/contacts", person(n, nil))
			names = append(names, n)
		}
	}
	return names
}

func TestListContacts(t *testing.T) {
	s := newServer(t, emulator.Options{})
	all := seedList(t, s.URL)
	first := listPage(t, s.URL, "")
	if len(first.Data) != workspace.DefaultPageSize || first.NextPageToken == nil || first.TotalItems != 23 {
		t.Fatalf("default page: %d items, token %v, total %d; want 10, a token, 23", len(first.Data), first.NextPageToken, first.TotalItems)
	}
	tests := []struct {
		name      string
		query     string
		want      []string
		wantPages int
	}{
		{name: "everything in pages of 7", query: "maxResults=7", want: all, wantPages: 4},
		{name: "everything in one page of 50", query: "maxResults=50", want: all, wantPages: 1},
		{name: "exactly full last page", query: "maxResults=23", want: all, wantPages: 1},
		{name: "pages of 1", query: "maxResults=1", want: all, wantPages: 23},
		{name: "externalIds repeated", query: "externalIds=a-3&externalIds=a-1", want: []string{"a1", "a3"}, wantPages: 1},
		{name: "externalIds[] form", query: "externalIds[]=b-2&externalIds[]=a-1", want: []string{"a1", "b2"}, wantPages: 1},
		{name: "both forms mixed", query: "externalIds=a-0&externalIds%5B%5D=b-0", want: []string{"a0", "b0"}, wantPages: 1},
		{name: "unknown externalId", query: "externalIds=zzz", want: nil, wantPages: 1},
		{name: "one source", query: "sources=custom-b&maxResults=3", want: []string{"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7"}, wantPages: 3},
		{name: "two sources", query: "sources[]=custom-b&sources=custom-a&maxResults=50", want: filter(all, "a", "b"), wantPages: 1},
		{name: "default source", query: "sources=" + emulator.DefaultSource, want: nil, wantPages: 1},
		{name: "externalIds and sources", query: "externalIds=a-1&externalIds=b-1&sources=custom-b", want: []string{"b1"}, wantPages: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pages := listAll(t, s.URL, tt.query)
			if !reflect.DeepEqual(got, tt.want) || pages != tt.wantPages {
				t.Errorf("got %v in %d pages, want %v in %d", got, pages, tt.want, tt.wantPages)
			}
		})
	}
}

func filter(names []string, prefixes ...string) []string {
	var out []string
	for _, n := range names {
		for _, p := range prefixes {
			if strings.HasPrefix(n, p) {
				out = append(out, n)
			}
		}
	}
	return out
}

func TestListContactsValidation(t *testing.T) {
	s := newServer(t, emulator.Options{})
	many := func(name string, n int) string {
		q := url.Values{}
		for i := 0; i < n; i++ {
			q.Add(name, fmt.Sprintf("v-%d", i))
		}
		return q.Encode()
	}
	tests := []struct {
		name     string
		query    string
		wantPath string // "": accepted
		wantMsg  string
	}{
		{name: "50 externalIds", query: many("externalIds", 50)},
		{name: "50 sources", query: many("sources", 50)},
		{name: "51 externalIds", query: many("externalIds", 51), wantPath: "/externalIds", wantMsg: "Expected array length to be less or equal to 50"},
		{name: "51 externalIds across both forms", query: many("externalIds", 30) + "&" + many("externalIds[]", 21), wantPath: "/externalIds"},
		{name: "51 sources", query: many("sources", 51), wantPath: "/sources"},
		{name: "empty externalId", query: "externalIds=", wantPath: "/externalIds/0"},
		{name: "externalId of 76", query: "externalIds=a&externalIds=" + strings.Repeat("x", 76), wantPath: "/externalIds/1", wantMsg: "less or equal to 75"},
		{name: "maxResults 0", query: "maxResults=0", wantPath: "/maxResults", wantMsg: "greater or equal to 1"},
		{name: "maxResults 51", query: "maxResults=51", wantPath: "/maxResults", wantMsg: "less or equal to 50"},
		{name: "maxResults not a number", query: "maxResults=ten", wantPath: "/maxResults", wantMsg: "Expected integer"},
		{name: "foreign page token", query: "pageToken=abc", wantPath: "/pageToken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, s.URL, "GET", "/v1/contacts?"+tt.query, nil)
			if tt.wantPath == "" {
				if r.status != http.StatusOK {
					t.Fatalf("status %d: %s", r.status, r.body)
				}
				return
			}
			eb := errorBody(t, r, http.StatusBadRequest)
			if len(eb.Errors) != 1 || eb.Errors[0].Path != tt.wantPath || eb.Code != "0400400" {
				t.Fatalf("errors = %+v, want one at %s", eb.Errors, tt.wantPath)
			}
			if !strings.Contains(eb.Errors[0].Message, tt.wantMsg) {
				t.Errorf("message %q, want %q", eb.Errors[0].Message, tt.wantMsg)
			}
		})
	}
}

// TestListPagingStable: contacts created while a client pages come after
// the ones it has not seen yet, deleted ones are skipped, and no contact
// is returned twice or skipped.
func TestListPagingStable(t *testing.T) {
	s := newServer(t, emulator.Options{})
	var ids []string
	for i := 0; i < 12; i++ {
		ids = append(ids, createContact(t, s.URL, person(fmt.Sprintf("c%02d", i), nil)).ID)
	}
	p1 := listPage(t, s.URL, "maxResults=5")
	createContact(t, s.URL, person("new1", nil))
	call(t, s.URL, "DELETE", "/v1/contacts/"+ids[7], nil) // not seen yet
	call(t, s.URL, "DELETE", "/v1/contacts/"+ids[1], nil) // already seen
	createContact(t, s.URL, person("new2", nil))
	rest, _ := listAll(t, s.URL, "maxResults=5", *p1.NextPageToken)
	var got []string
	for _, c := range p1.Data {
		got = append(got, *c.DefaultFields.FirstName)
	}
	got = append(got, rest...)
	want := []string{"c00", "c01", "c02", "c03", "c04", "c05", "c06", "c08", "c09", "c10", "c11", "new1", "new2"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("paged %v, want %v", got, want)
	}
}

// TestListDuplicatesPaged: several contacts with one externalId are all
// listed, across pages.
func TestListDuplicatesPaged(t *testing.T) {
	s := newServer(t, emulator.Options{})
	var want []string
	for i := 0; i < 12; i++ {
		n := fmt.Sprintf("d%02d", i)
		createContact(t, s.URL, person(n, map[string]any{"externalId": "dup", "source": "custom-x"}))
		createContact(t, s.URL, person("other", map[string]any{"externalId": "other"}))
		want = append(want, n)
	}
	p := listPage(t, s.URL, "externalIds=dup&maxResults=5")
	if p.TotalItems != 12 {
		t.Errorf("totalItems = %d, want 12", p.TotalItems)
	}
	got, pages := listAll(t, s.URL, "externalIds=dup&sources=custom-x&maxResults=5")
	if !reflect.DeepEqual(got, want) || pages != 3 {
		t.Fatalf("got %v in %d pages, want %v in 3", got, pages, want)
	}
}
