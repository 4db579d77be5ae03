package browser

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// needChromium skips the test when Chromium is absent, unless CI=true.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
}

func TestFindHonoursEnv(t *testing.T) {
	t.Setenv(EnvPath, filepath.Join(t.TempDir(), "no-such-chromium"))
	_, err := Find()
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("Find with a missing %s: err = %v, want ErrNotFound", EnvPath, err)
	}
}

func TestFindReportsHowToInstall(t *testing.T) {
	t.Setenv(EnvPath, "")
	t.Setenv("PATH", t.TempDir())
	orig := candidates
	candidates = []string{filepath.Join(t.TempDir(), "chromium")}
	defer func() { candidates = orig }()
	_, err := Find()
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if got := err.Error(); !bytes.Contains([]byte(got), []byte("apt-get install chromium")) {
		t.Errorf("error %q does not say how to install Chromium", got)
	}
}

func TestFileURL(t *testing.T) {
	got, err := FileURL("/tmp/a b/report.html")
	if err != nil {
		t.Fatal(err)
	}
	if want := "file:///tmp/a%20b/report.html"; got != want {
		t.Errorf("FileURL = %q, want %q", got, want)
	}
}

func TestScreenshot(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	html := filepath.Join(dir, "page.html")
	page := `<!doctype html><html><body style="margin:0"><div id="box" style="width:300px;height:1600px;background:#d62728">tall</div></body></html>`
	if err := os.WriteFile(html, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "page.png")
	if err := Screenshot(context.Background(), html, png); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(png)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("screenshot is not a PNG (starts %q)", b[:min(8, len(b))])
	}
	// IHDR: width and height are big-endian at bytes 16..23. A full-page
	// shot covers the 1600 px tall box, beyond the 900 px window.
	h := int(b[20])<<24 | int(b[21])<<16 | int(b[22])<<8 | int(b[23])
	if h < 1600 {
		t.Errorf("screenshot is %d px tall, want the full page (>= 1600)", h)
	}
}

func TestOpenAndEvaluate(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	html := filepath.Join(dir, "p.html")
	if err := os.WriteFile(html, []byte(`<!doctype html><p class="x">a</p><p class="x">b</p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, cancel, err := Start(context.Background(), 800)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if err := Open(tab, html); err != nil {
		t.Fatal(err)
	}
	n, err := chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll("p.x").length`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, 2; got != want {
		t.Errorf("page has %d p.x elements, want %d", got, want)
	}

	// An SVG document has no body; Open must still return.
	svg := filepath.Join(dir, "c.svg")
	if err := os.WriteFile(svg, []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect class="r" width="5" height="5"/></svg>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Open(tab, svg); err != nil {
		t.Fatal(err)
	}
	n, err = chromedp.Run(tab, chromedp.Evaluate[int](`document.querySelectorAll("rect.r").length`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n, 1; got != want {
		t.Errorf("svg has %d rect.r elements, want %d", got, want)
	}
}
