package daemon_test

import (
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncd-io/syncd/internal/testkit/browsertest"
	"github.com/syncd-io/syncd/reconcile"
)

// thousands formats n as the health page does: 12,345.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// screenshot keeps a 1280x900 screenshot of url as an artifact.
func screenshot(t *testing.T, bin, url, name string) {
	t.Helper()
	shot := filepath.Join(browsertest.ArtifactsDir(t), name)
	_ = os.Remove(shot)
	browsertest.Run(t, bin, url, "--screenshot="+shot, "--window-size=1280,1400")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	if _, err := png.Decode(f); err != nil {
		t.Fatalf("screenshot %s is not a PNG: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}

func wantInDOM(t *testing.T, when, dom string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(dom, w) {
			t.Errorf("%s: the DOM lacks %q", when, w)
		}
	}
}

func TestHealthPageDuringAndAfterAPassInChromium(t *testing.T) {
	bin := browsertest.Chromium(t)
	const rows, bad = 1200, 300 // every 300th row is refused: 4 dead letters
	e := newSlowEnv(t, rows, 400, 2*time.Millisecond, bad)
	url := strings.Replace(e.api.URL, "127.0.0.1", "localhost", 1) + "/"

	type result struct {
		sums []reconcile.Summary
		err  error
	}
	done := make(chan result, 1)
	go func() {
		sums, err := e.d.RunOnce(context.Background())
		done <- result{sums, err}
	}()
	// Hold the pass a third of the way through, look, and let it go.
	deadline := time.Now().Add(60 * time.Second)
	var held, heldCalls int64
	var heldDead int
	var err error
	for {
		p, ok := e.d.Connectors()[0].Progress()
		if ok && p.Done >= rows/3 {
			e.pause()
			time.Sleep(300 * time.Millisecond) // the writes in flight land
			p, _ = e.d.Connectors()[0].Progress()
			held = p.Done
			heldCalls = e.d.Workspace().Calls()
			if heldDead, err = e.d.Store().DeadLetters.Count("crm"); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pass never reached a third of the rows")
		}
		time.Sleep(20 * time.Millisecond)
	}
	during := browsertest.Run(t, bin, url, "--dump-dom")
	screenshot(t, bin, url, "health-page-running.png")
	e.resume()

	bar := regexp.MustCompile(`<progress max="(\d+)" value="(\d+)"`).FindStringSubmatch(during)
	if bar == nil {
		t.Fatalf("during the pass: no progress bar with max and value in the DOM:\n%s", during)
	}
	if bar[1] != strconv.Itoa(rows) {
		t.Errorf("during the pass: bar max %s, want the %d rows", bar[1], rows)
	}
	if v, _ := strconv.ParseInt(bar[2], 10, 64); v < held-5 || v > held {
		t.Errorf("during the pass: bar value %d, want the %d records done when it was held", v, held)
	}
	wantInDOM(t, "during the pass", during,
		`<section id="progress">`, `id="progress-crm"`, `<span class="badge run">run</span>`,
		fmt.Sprintf("of %s records (", thousands(int64(rows))), "records/s", "left · created ",
		`<meta http-equiv="refresh" content="10">`,
		`<figure id="figure-api-calls"><figcaption>API calls per minute (quota 24,000/min)</figcaption>`,
		`<figure id="figure-passes"><figcaption>Records written per pass, by kind</figcaption>`,
		`<figure id="figure-problems"><figcaption>Dead letters and conflicts over time</figcaption>`,
		`id="chart-api-calls"`, `id="chart-passes"`, `id="chart-problems"`,
		// The charts are up to the moment, not to the last minute's sample.
		fmt.Sprintf(": %s calls, peak ", thousands(heldCalls)), "no pass finished yet",
		fmt.Sprintf("now %d dead letters, 0 conflicts", heldDead),
	)
	if heldDead < 1 {
		t.Errorf("no dead letter yet when the pass was held at %d records", held)
	}

	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	sum := res.sums[0]
	if sum.Created != rows-rows/bad || sum.Failed != rows/bad {
		t.Fatalf("pass summary %v, want %d created and %d failed", sum, rows-rows/bad, rows/bad)
	}
	after := browsertest.Run(t, bin, url, "--dump-dom")
	screenshot(t, bin, url, "health-page-after.png")
	if strings.Contains(after, `id="progress-crm"`) || strings.Contains(after, `http-equiv="refresh"`) {
		t.Error("after the pass: the page still shows it running")
	}
	runs, err := e.d.Store().Runs.List("crm", 1)
	if err != nil {
		t.Fatal(err)
	}
	wantInDOM(t, "after the pass", after,
		fmt.Sprintf(`<g class="pass" id="pass-%d"><title>crm run at`, runs[0].ID),
		fmt.Sprintf(": %d created, 0 updated, 0 adopted, 0 deleted, %d failed (0 unchanged)</title>", sum.Created, sum.Failed),
		`class="created"`, `class="failed"`,
		"API calls per minute since ",
		fmt.Sprintf(": %s calls, peak ", thousands(sum.APICalls)),
		"quota 24,000 per minute", ">quota 24,000/min</text>",
		fmt.Sprintf("now %d dead letters, 0 conflicts", rows/bad), fmt.Sprintf(">dead letters %d</text>", rows/bad),
	)
}
