package admin

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/state"
)

// heldFake is the fake daemon with held deletions.
type heldFake struct {
	*fakeDaemon
	held    []state.HeldDelete
	settled []string
}

func (f *heldFake) HeldDeletes(conn string) ([]state.HeldDelete, error) {
	if conn != "" && conn != "crm" {
		return nil, ErrUnknownConnector
	}
	return f.held, nil
}

func (f *heldFake) ApproveHeldDeletes(_ context.Context, conn string) (int, error) {
	f.settled = append(f.settled, "approve "+conn)
	n := len(f.held)
	f.held = nil
	return n, nil
}

func (f *heldFake) DropHeldDeletes(conn string) (int, error) {
	f.settled = append(f.settled, "drop "+conn)
	n := len(f.held)
	f.held = nil
	return n, nil
}

func newHeldFake() *heldFake {
	f := &heldFake{fakeDaemon: newFake()}
	for i, ext := range []string{"row-1", "row-2", "row-3"} {
		f.held = append(f.held, state.HeldDelete{Connector: "crm", ContactID: "c" + ext, ExternalID: ext, RecordID: ext, HeldAt: time.Now().Add(-time.Duration(i) * time.Minute)})
	}
	return f
}

// TestHeldDeletesAPI: the held deletions (the write-back's mass-delete
// guard) are listed with the token only (they show records), approved or
// dropped with it, and on the health page with their two buttons.
func TestHeldDeletesAPI(t *testing.T) {
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	for _, tc := range []struct {
		name, method, path string
		hdr                map[string]string
		want               int
		settled            string
	}{
		{"list without the token", "GET", "/deletes", nil, 401, ""},
		{"list with the token", "GET", "/deletes?connector=crm", bearer, 200, ""},
		{"list of an unknown connector", "GET", "/deletes?connector=nope", bearer, 404, ""},
		{"approve without the token", "POST", "/deletes/crm/approve", nil, 401, ""},
		{"approve with the token", "POST", "/deletes/crm/approve", bearer, 200, "approve crm"},
		{"drop with the token", "POST", "/deletes/crm/drop", bearer, 200, "drop crm"},
		{"unknown action", "POST", "/deletes/crm/explode", bearer, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newHeldFake()
			rec := serve(t, &Server{Daemon: f, Token: testToken, Log: quietLog()}, tc.method, tc.path, nil, tc.hdr)
			if rec.Code != tc.want {
				t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.path, rec.Code, rec.Body, tc.want)
			}
			if got := strings.Join(f.settled, ","); got != tc.settled {
				t.Errorf("settled %q, want %q", got, tc.settled)
			}
			if tc.want != 200 {
				if strings.Contains(rec.Body.String(), "row-1") {
					t.Error("a refused answer shows a held record")
				}
				return
			}
			if tc.method == "GET" {
				var hs []state.HeldDelete
				if err := json.Unmarshal(rec.Body.Bytes(), &hs); err != nil || len(hs) != 3 || hs[0].ExternalID != "row-1" {
					t.Errorf("list = %s (%v), want the 3 held deletions", rec.Body, err)
				}
				return
			}
			var out HeldDeletesResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Approved+out.Dropped != 3 {
				t.Errorf("answer = %s (%v), want 3 settled", rec.Body, err)
			}
		})
	}

	t.Run("health page", func(t *testing.T) {
		f := newHeldFake()
		html := serve(t, &Server{Daemon: f, Log: quietLog()}, "GET", "/", nil, nil).Body.String()
		for _, want := range []string{`id="helddeletes"`, `id="held-crm"`, `<td class="num">3</td>`, `<code>row-1</code>`,
			`formaction="ui/deletes/crm/approve"`, `formaction="ui/deletes/crm/drop"`, "syncd deletes list|approve|drop"} {
			if !strings.Contains(html, want) {
				t.Errorf("page lacks %q", want)
			}
		}
		code, loc := postForm(t, &Server{Daemon: f, Log: quietLog()}, "/ui/deletes/crm/drop", url.Values{}, nil)
		if code != 303 || !strings.Contains(loc, "notice=deletes-drop") || strings.Join(f.settled, ",") != "drop crm" {
			t.Errorf("Drop button: %d %s, settled %v", code, loc, f.settled)
		}
		if html := serve(t, &Server{Daemon: f, Log: quietLog()}, "GET", "/", nil, nil).Body.String(); strings.Contains(html, `id="helddeletes"`) {
			t.Error("the page still shows held deletions after they were dropped")
		}
	})
}
