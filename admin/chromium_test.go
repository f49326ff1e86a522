package admin

import (
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/syncd-io/syncd/internal/testkit/browsertest"
)

func chromium(t *testing.T) string { return browsertest.Chromium(t) }

func artifactsDir(t *testing.T) string { return browsertest.ArtifactsDir(t) }

func runChromium(t *testing.T, bin, url string, extra ...string) string {
	t.Helper()
	return browsertest.Run(t, bin, url, extra...)
}

func TestHealthPageInChromium(t *testing.T) {
	bin := chromium(t)
	f := newFake()
	srv := httptest.NewServer((&Server{Daemon: f, Token: testToken, Log: quietLog()}).Handler())
	defer srv.Close()
	// Seen from "another host": the page must not depend on the address
	// it is served from, so it is fetched under a name, not 127.0.0.1.
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/"

	// Without the cookie the page asks for the token and shows no record.
	asked := runChromium(t, bin, url, "--dump-dom")
	for _, want := range []string{`<form id="login" method="post" action="./">`, `<input type="password" id="token" name="token"`} {
		if !strings.Contains(asked, want) {
			t.Errorf("the page without the token lacks %q:\n%s", want, asked)
		}
	}
	for _, record := range []string{"row-17", "Smith-Jones", "is not E.164"} {
		if strings.Contains(asked, record) {
			t.Errorf("the page without the token shows %q", record)
		}
	}

	// A person types the token once; the browser keeps the cookie for the
	// page and the JSON it links to.
	b := browsertest.Start(t, bin)
	b.Open(url)
	b.Submit("token", "wrong-"+testToken, "open")
	if dom := b.DOM(); !strings.Contains(dom, "Refused: the admin token is wrong.") || strings.Contains(dom, "row-17") {
		t.Errorf("a wrong token: the page does not say so, or shows records:\n%s", dom)
	}
	b.Submit("token", testToken, "open")
	dom := b.DOM()
	b.Open(url)
	if again := b.DOM(); !strings.Contains(again, `<tr id="deadletter-4">`) {
		t.Errorf("the page opened again asks for the token again:\n%s", again)
	}
	b.Open(strings.TrimSuffix(url, "/") + "/deadletters")
	if js := b.DOM(); !strings.Contains(js, "row-17") {
		t.Errorf("the dead letters' JSON, linked from the page, is not shown with the cookie:\n%s", js)
	}

	if !strings.Contains(dom, "<html") {
		t.Fatalf("chromium built no document:\n%s", dom)
	}
	if strings.Contains(strings.ToLower(dom), "<script") {
		t.Error("the page's DOM holds a <script> element: the dead letter's reason was not escaped")
	}
	if !strings.Contains(dom, `&lt;script&gt;alert("x")&lt;/script&gt; is not E.164`) {
		t.Error("the DOM does not show the dead letter's reason as text")
	}
	for _, want := range []string{
		`id="readiness">Ready</span>`,
		`<tr id="connector-crm">`, `<tr id="connector-hubspot">`, `4995`,
		`<span class="badge run">running</span>`,
		`<tr id="deadletter-4">`, `<code>row-17</code>`, `firstName: no value and no fallback`,
		`<tr id="conflict-2">`, `Smith-Jones`,
		`<form id="actions" method="post" action="ui/resync">`,
		`<button form="actions" formaction="ui/resync" name="connector" value="crm">Resync</button>`,
		`formaction="ui/deadletters/4/retry"`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	if strings.Contains(dom, `name="token"`) {
		t.Error("the page asks for the token again on its buttons although the cookie carries it")
	}

	shot := filepath.Join(artifactsDir(t), "health-page.png")
	_ = os.Remove(shot)
	b.Open(url)
	b.Screenshot(shot)
	file, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer file.Close()
	img, err := png.Decode(file)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 900 {
		t.Errorf("screenshot is %dx%d, want 1280x900", b.Dx(), b.Dy())
	}
	// A rendered page is not blank: the header bar is dark, the body light.
	r, g, bl, _ := img.At(10, 10).RGBA()
	r2, g2, b2, _ := img.At(640, 880).RGBA()
	if r+g+bl >= r2+g2+b2 {
		t.Errorf("screenshot looks unstyled: top-left %v,%v,%v not darker than bottom %v,%v,%v", r>>8, g>>8, bl>>8, r2>>8, g2>>8, b2>>8)
	}
	t.Logf("screenshot: %s", shot)
}
