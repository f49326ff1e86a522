package admin

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// With admin.token set, every endpoint and page that shows records needs
// it (bearer or the page's cookie); health, readiness, metrics and status
// stay open. Without a token (loopback only) everything is open.
func TestRecordsNeedTheToken(t *testing.T) {
	good := (&Server{Token: testToken}).sessionValue()
	other := (&Server{Token: "an-older-token"}).sessionValue()
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	cookie := func(v string) map[string]string { return map[string]string{"Cookie": sessionCookie + "=" + v} }
	tests := []struct {
		name       string
		token      string
		path       string
		hdr        map[string]string
		wantStatus int
		wantRecord bool // the body shows a record (a dead letter's key or a conflict's value)
	}{
		{"dead letters without the token", testToken, "/deadletters", nil, 401, false},
		{"dead letters with a wrong bearer", testToken, "/deadletters", map[string]string{"Authorization": "Bearer guess"}, 401, false},
		{"dead letters with the bearer", testToken, "/deadletters", bearer, 200, true},
		{"dead letters with the page's cookie", testToken, "/deadletters", cookie(good), 200, true},
		{"dead letters with the token itself as cookie", testToken, "/deadletters", cookie(testToken), 401, false},
		{"dead letters with an older token's cookie", testToken, "/deadletters", cookie(other), 401, false},
		{"field warnings without the token", testToken, "/fieldwarnings", nil, 401, false},
		{"field warnings with the bearer", testToken, "/fieldwarnings", bearer, 200, true},
		{"conflicts without the token", testToken, "/conflicts", nil, 401, false},
		{"conflicts with the bearer", testToken, "/conflicts", bearer, 200, true},
		{"conflicts with the page's cookie", testToken, "/conflicts", cookie(good), 200, true},
		{"health page without the token asks for it", testToken, "/", nil, 401, false},
		{"health page with the page's cookie", testToken, "/", cookie(good), 200, true},
		{"health page with an older token's cookie", testToken, "/", cookie(other), 401, false},
		{"healthz stays open", testToken, "/healthz", nil, 200, false},
		{"readyz stays open", testToken, "/readyz", nil, 200, false},
		{"metrics stay open", testToken, "/metrics", nil, 200, false},
		{"status stays open", testToken, "/status", nil, 200, false},
		{"no token: dead letters", "", "/deadletters", nil, 200, true},
		{"no token: conflicts", "", "/conflicts", nil, 200, true},
		{"no token: health page", "", "/", nil, 200, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{Daemon: newFake(), Token: tt.token, Log: quietLog(),
				Metrics: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("syncd_up 1\n")) })}
			rec := serve(t, s, "GET", tt.path, nil, tt.hdr)
			if rec.Code != tt.wantStatus {
				t.Fatalf("GET %s = %d, want %d\n%s", tt.path, rec.Code, tt.wantStatus, rec.Body)
			}
			body := rec.Body.String()
			shows := strings.Contains(body, "row-17") || strings.Contains(body, "Smith-Jones") || strings.Contains(body, "n/a")
			if shows != tt.wantRecord {
				t.Errorf("GET %s shows a record = %v, want %v\n%s", tt.path, shows, tt.wantRecord, body)
			}
			if strings.Contains(body, testToken) {
				t.Errorf("GET %s shows the token", tt.path)
			}
			if tt.path == "/" && tt.wantStatus == 401 && !strings.Contains(body, `<input type="password" id="token" name="token"`) {
				t.Errorf("the page without the cookie does not ask for the token:\n%s", body)
			}
		})
	}
}

// The page asks once: the token POSTed to the page sets an HttpOnly,
// SameSite=Strict cookie derived from it; with that cookie the page, the
// JSON reads and the buttons work without the token again.
func TestHealthPageAsksForTheTokenOnce(t *testing.T) {
	f := newFake()
	srv := httptest.NewServer((&Server{Daemon: f, Token: testToken, Log: quietLog()}).Handler())
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) (int, string) {
		t.Helper()
		res, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}

	res, err := c.PostForm(srv.URL+"/", url.Values{"token": {"guess"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 || len(jar.Cookies(mustURL(t, srv.URL))) != 0 {
		t.Fatalf("a wrong token = %d with cookies %v, want 401 and none", res.StatusCode, jar.Cookies(mustURL(t, srv.URL)))
	}

	// Without following the redirect, to see the cookie's attributes.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = noFollow.PostForm(srv.URL+"/", url.Values{"token": {testToken}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	setCookie := res.Header.Get("Set-Cookie")
	if res.StatusCode != 303 || res.Header.Get("Location") != "./" {
		t.Fatalf("login = %d Location %q, want 303 ./", res.StatusCode, res.Header.Get("Location"))
	}
	for _, want := range []string{sessionCookie + "=", "HttpOnly", "SameSite=Strict", "Max-Age="} {
		if !strings.Contains(setCookie, want) {
			t.Errorf("Set-Cookie %q lacks %q", setCookie, want)
		}
	}
	if strings.Contains(setCookie, testToken) {
		t.Errorf("the cookie holds the token itself: %q", setCookie)
	}

	res, err = c.PostForm(srv.URL+"/", url.Values{"token": {testToken}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Request.URL.Path != "/" {
		t.Fatalf("login followed = %d at %s, want the page", res.StatusCode, res.Request.URL)
	}
	code, page := get("/")
	if code != 200 || !strings.Contains(page, "row-17") || strings.Contains(page, `name="token"`) {
		t.Errorf("page with the cookie = %d, want the records and no token field:\n%s", code, page)
	}
	if code, body := get("/deadletters"); code != 200 || !strings.Contains(body, "row-17") {
		t.Errorf("dead letters with the cookie = %d %s", code, body)
	}
	res, err = c.PostForm(srv.URL+"/ui/deadletters/4/drop", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if len(f.dropped) != 1 || f.dropped[0] != 4 || res.Request.URL.Query().Get("notice") != "drop" {
		t.Errorf("drop with the cookie: dropped %v, landed on %s", f.dropped, res.Request.URL)
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
