package admin

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/remote"
)

func TestPageEscapesAndUsesRelativeURLs(t *testing.T) {
	f := newFake()
	rec := serve(t, &Server{Daemon: f, Log: quietLog()}, "GET", "/", nil, nil)
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("page = %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	html := rec.Body.String()
	if strings.Contains(strings.ToLower(html), "<script") {
		t.Error("page contains a <script> element: the dead letter reason was not escaped (or a script was added)")
	}
	if !strings.Contains(html, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Error("page does not show the dead letter reason escaped")
	}
	for _, absolute := range []string{"http://", "https://", "localhost", "127.0.0.1", `action="/`, `formaction="/`, `href="/`} {
		if strings.Contains(html, absolute) {
			t.Errorf("page contains %q: it must use relative URLs only, to work from other hosts and behind a proxy", absolute)
		}
	}
	for _, want := range []string{
		`id="connector-crm"`, `4995`, `row-17`, `Smith-Jones`, `newest-wins`,
		`formaction="ui/resync" name="connector" value="crm"`, `formaction="ui/deadletters/4/retry"`, `formaction="ui/deadletters/5/drop"`,
		`<span class="badge run">running</span>`, `version v9.9.9`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(html, `name="token"`) {
		t.Error("page asks for a token although none is configured")
	}
	csp := rec.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "script-src") {
		t.Errorf("Content-Security-Policy = %q, want no scripts allowed", csp)
	}

	rec = serve(t, &Server{Daemon: f, Token: testToken, Log: quietLog()}, "GET", "/", nil, nil)
	if !strings.Contains(rec.Body.String(), `type="password" id="token" name="token"`) {
		t.Error("page with a token configured has no token field")
	}
	if strings.Contains(rec.Body.String(), testToken) {
		t.Error("page shows the admin token")
	}
}

func postForm(t *testing.T, s *Server, path string, form url.Values, hdr map[string]string) (code int, location string) {
	t.Helper()
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range hdr {
		h[k] = v
	}
	rec := serve(t, s, "POST", path, strings.NewReader(form.Encode()), h)
	return rec.Code, rec.Header().Get("Location")
}

func TestPageButtons(t *testing.T) {
	browser := map[string]string{"Origin": "http://127.0.0.1:8081", "Sec-Fetch-Site": "same-origin"}
	remoteBrowser := map[string]string{"Host": "syncd.internal:8081", "Origin": "http://syncd.internal:8081", "Sec-Fetch-Site": "same-origin"}
	tests := []struct {
		name         string
		token        string
		path         string
		form         url.Values
		hdr          map[string]string
		wantCode     int
		wantLocation string
		wantResync   string // connector resynced, "-" for none
		wantDropped  bool
	}{
		{"token: resync with the token", testToken, "/ui/resync", url.Values{"token": {testToken}, "connector": {"crm"}}, remoteBrowser, 303, "../?connector=crm&notice=resync", "crm", false},
		{"token: resync all", testToken, "/ui/resync", url.Values{"token": {testToken}}, remoteBrowser, 303, "../?connector=&notice=resync", "", false},
		{"token: missing", testToken, "/ui/resync", url.Values{"connector": {"crm"}}, remoteBrowser, 303, "../?notice=refused", "-", false},
		{"token: wrong", testToken, "/ui/resync", url.Values{"token": {"guess"}, "connector": {"crm"}}, remoteBrowser, 303, "../?notice=refused", "-", false},
		{"token: unknown connector", testToken, "/ui/resync", url.Values{"token": {testToken}, "connector": {"nope"}}, remoteBrowser, 404, "", "-", false},
		{"token: drop", testToken, "/ui/deadletters/4/drop", url.Values{"token": {testToken}}, remoteBrowser, 303, "../?id=4&notice=drop", "-", true},
		{"token: drop without token", testToken, "/ui/deadletters/4/drop", nil, remoteBrowser, 303, "../?notice=refused", "-", false},
		{"token: bearer header is not enough for a form", testToken, "/ui/deadletters/4/drop", nil, map[string]string{"Authorization": "Bearer " + testToken}, 303, "../?notice=refused", "-", false},
		{"no token: same-origin", "", "/ui/resync", url.Values{"connector": {"crm"}}, browser, 303, "../?connector=crm&notice=resync", "crm", false},
		{"no token: cross-site", "", "/ui/resync", url.Values{"connector": {"crm"}}, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403, "", "-", false},
		{"no token: other host", "", "/ui/deadletters/4/drop", nil, remoteBrowser, 403, "", "-", false},
		{"no token: drop", "", "/ui/deadletters/4/drop", nil, browser, 303, "../?id=4&notice=drop", "-", true},
		{"unknown action", "", "/ui/deadletters/4/explode", nil, browser, 404, "", "-", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			s := &Server{Daemon: f, Token: tt.token, Log: quietLog()}
			code, loc := postForm(t, s, tt.path, tt.form, tt.hdr)
			if code != tt.wantCode || loc != tt.wantLocation {
				t.Fatalf("POST %s = %d Location %q, want %d %q", tt.path, code, loc, tt.wantCode, tt.wantLocation)
			}
			if tt.wantResync == "-" {
				select {
				case got := <-f.resynced:
					t.Errorf("resync of %q started, want none", got)
				case <-time.After(50 * time.Millisecond):
				}
			} else {
				select {
				case got := <-f.resynced:
					if got != tt.wantResync {
						t.Errorf("resync of %q, want %q", got, tt.wantResync)
					}
				case <-time.After(5 * time.Second):
					t.Error("no resync started")
				}
			}
			if dropped := len(f.dropped) > 0; dropped != tt.wantDropped {
				t.Errorf("dropped = %v, want %v", f.dropped, tt.wantDropped)
			}
		})
	}
}

func TestPageRetryButtonRunsInTheBackground(t *testing.T) {
	f := newFake()
	s := &Server{Daemon: f, Log: quietLog()}
	code, loc := postForm(t, s, "/ui/deadletters/4/retry", nil, map[string]string{"Origin": "http://127.0.0.1:8081"})
	if code != 303 || loc != "../?id=4&notice=retry" {
		t.Fatalf("retry = %d %q", code, loc)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.mu.Lock()
		n := len(f.retried)
		f.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("retry never reached the daemon")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNoticeShowsOnlyKnownMessages(t *testing.T) {
	st := newFake().status
	tests := []struct {
		query string
		want  string // regexp; "" for no notice
	}{
		{"notice=resync&connector=crm", `^Resync of crm started`},
		{"notice=resync&connector=", `^Resync of every connector started`},
		{"notice=resync&connector=%3Cb%3Eevil", ``},
		{"notice=retry&id=4", `dead letter 4`},
		{"notice=retry&id=x", ``},
		{"notice=drop&id=9", `^Dead letter 9 dropped`},
		{"notice=refused", `token is missing or wrong`},
		{"notice=Your+account+is+locked", ``},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, _ := url.ParseQuery(tt.query)
			got := notice(q, st)
			if tt.want == "" && got != "" || tt.want != "" && !regexp.MustCompile(tt.want).MatchString(got) {
				t.Errorf("notice(%s) = %q, want %q", tt.query, got, tt.want)
			}
		})
	}
}

func TestAgo(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"zero", time.Time{}, ""},
		{"seconds", now.Add(-42 * time.Second), "42s ago"},
		{"minutes", now.Add(-5 * time.Minute), "5m ago"},
		{"hours", now.Add(-(3*time.Hour + 4*time.Minute)), "3h04m ago"},
		{"days", now.Add(-72 * time.Hour), "3d ago"},
		{"future", now.Add(90 * time.Second), "in 1m30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ago(now, tt.t); got != tt.want {
				t.Errorf("ago = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPageShowsLoweredRates: a rate the 429s lowered is on the page with
// its configured ceiling and how many answers were 429 (issue 23's storm
// of 429s says so "on the page").
func TestPageShowsLoweredRates(t *testing.T) {
	f := newFake()
	f.status.Rates = []remote.RateStatus{{API: "workspace api", Limit: 4.5, Configured: 50, Calls: 200, Throttled: 22, Cuts: 2, LastCut: time.Now()}}
	html := serve(t, &Server{Daemon: f, Log: quietLog()}, "GET", "/", nil, nil).Body.String()
	for _, want := range []string{`id="rates"`, `<span class="badge bad">lowered</span> <strong>workspace api</strong> at 4.5/s of 50/s configured`, `22 of 200 answers were 429`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	f.status.Rates = nil
	if html := serve(t, &Server{Daemon: f, Log: quietLog()}, "GET", "/", nil, nil).Body.String(); strings.Contains(html, `id="rates"`) {
		t.Error("page shows an API rates section with no rate met a 429")
	}
}
