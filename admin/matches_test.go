package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/reconcile"
)

// matchFake is the fake daemon with one record held for an ambiguous
// match.
type matchFake struct {
	*fakeDaemon
	held     []HeldMatch
	resolved []string
}

func (f *matchFake) HeldMatches(conn string) ([]HeldMatch, error) {
	if conn != "" && conn != "crm" {
		return nil, fmt.Errorf("%w %q", ErrUnknownConnector, conn)
	}
	return f.held, nil
}

func (f *matchFake) ResolveHeldMatch(_ context.Context, conn, ext, contact string) (reconcile.Summary, error) {
	if len(f.held) == 0 || ext != f.held[0].ExternalID {
		return reconcile.Summary{Connector: conn}, fmt.Errorf("%w: %s/%s", reconcile.ErrNotHeld, conn, ext)
	}
	f.resolved = append(f.resolved, conn+"/"+ext+"->"+contact)
	f.held = nil
	sum := reconcile.Summary{Connector: conn, Kind: "resolve", Adopted: 1}
	if contact == "" {
		sum.Adopted, sum.Created = 0, 1
	}
	return sum, nil
}

// TestHeldMatchesAPI: records held for an ambiguous match are listed with
// the token only (they show records) and resolved with it; a record not
// held, or a body without its externalId, is refused.
func TestHeldMatchesAPI(t *testing.T) {
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     int
		resolved                 string
	}{
		{"list without the token", "GET", "/matches", "", nil, 401, ""},
		{"list with the token", "GET", "/matches?connector=crm", "", bearer, 200, ""},
		{"list of an unknown connector", "GET", "/matches?connector=nope", "", bearer, 404, ""},
		{"resolve without the token", "POST", "/matches/crm/resolve", `{"externalId":"7","contactId":"C1"}`, nil, 401, ""},
		{"resolve adopting a contact", "POST", "/matches/crm/resolve", `{"externalId":"7","contactId":"C1"}`, bearer, 200, "crm/7->C1"},
		{"resolve creating a contact", "POST", "/matches/crm/resolve", `{"externalId":"7"}`, bearer, 200, "crm/7->"},
		{"resolve of a record not held", "POST", "/matches/crm/resolve", `{"externalId":"8"}`, bearer, 404, ""},
		{"resolve without an externalId", "POST", "/matches/crm/resolve", `{}`, bearer, 400, ""},
		{"resolve with a broken body", "POST", "/matches/crm/resolve", `{"externalId":`, bearer, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &matchFake{fakeDaemon: newFake(), held: []HeldMatch{{Connector: "crm", ExternalID: "7", Candidates: []string{"C1", "C2"}, Reason: "2 contacts match"}}}
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			rec := serve(t, &Server{Daemon: f, Token: testToken, Log: quietLog()}, tc.method, tc.path, body, tc.hdr)
			if rec.Code != tc.want {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.path, rec.Code, rec.Body, tc.want)
			}
			if got := strings.Join(f.resolved, ","); got != tc.resolved {
				t.Errorf("resolved %q, want %q", got, tc.resolved)
			}
			if tc.want == 401 && strings.Contains(rec.Body.String(), "C2") {
				t.Error("a refused answer shows a held record")
			}
			if tc.want != 200 {
				return
			}
			if tc.method == "GET" {
				var hs []HeldMatch
				if err := json.Unmarshal(rec.Body.Bytes(), &hs); err != nil || len(hs) != 1 || hs[0].ExternalID != "7" || len(hs[0].Candidates) != 2 {
					t.Errorf("list = %s (%v), want the held record with its 2 candidates", rec.Body, err)
				}
				return
			}
			var out ResolveResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Summary.Created+out.Summary.Adopted != 1 || out.Error != "" {
				t.Errorf("answer = %s (%v), want the resolve's summary", rec.Body, err)
			}
		})
	}
}
