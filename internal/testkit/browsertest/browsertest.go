// Package browsertest drives Debian's headless Chromium for tests of the
// health page: it dumps the DOM a real browser builds and takes
// screenshots, which are kept as test artifacts.
package browsertest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Chromium returns the path of Debian's headless-capable chromium. The
// test fails (never skips) without it: the health page must be checked in
// a real browser.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed; the health page is tested in headless Chromium. " +
		"Install it with: apt-get update && apt-get install -y chromium (.ci/run does this)")
	return ""
}

// ArtifactsDir is where tests keep what a person may want to look at:
// $SYNCD_TEST_ARTIFACTS, or testdata-out/ at the module root (gitignored).
func ArtifactsDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("SYNCD_TEST_ARTIFACTS")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		root := wd
		for {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(root)
			if parent == root {
				root = wd
				break
			}
			root = parent
		}
		dir = filepath.Join(root, "testdata-out")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Run runs headless Chromium on url with the given extra flags (e.g.
// --dump-dom, --screenshot=FILE) and returns its standard output.
func Run(t testing.TB, bin, url string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--window-size=1280,900",
	}
	args = append(append(args, extra...), url)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
	}
	return stdout.String()
}
