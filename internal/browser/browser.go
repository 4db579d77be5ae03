// Package browser finds and drives a headless Chromium: it opens local HTML
// files (tokenpulse's reports) and takes full-page screenshots, and gives
// tests a chromedp context to inspect the page's DOM.
//
//	path, err := browser.Find() // "/usr/bin/chromium", or an error saying how to install it
//	err = browser.Screenshot(ctx, "out/report.html", "out/report.png")
//
// Chromium runs with --headless --no-sandbox --disable-gpu and the
// background networking, component updates and sync turned off, in a fresh
// user-data directory that is removed afterwards, so a run touches no
// profile and reaches no network on its own. Set TOKENPULSE_CHROMIUM to use
// another binary.
//
// Every call starts its own browser; calls are safe for concurrent use.
package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/chromedp/chromedp"
)

// EnvPath is the environment variable that names the Chromium binary to
// use, ahead of the usual places.
const EnvPath = "TOKENPULSE_CHROMIUM"

// ErrNotFound is returned (wrapped) by Find when no Chromium is installed.
var ErrNotFound = errors.New("no Chromium or Chrome found")

// candidates are the names and paths Find tries, in order.
var candidates = []string{
	"/usr/bin/chromium", "/usr/bin/chromium-browser", "chromium", "chromium-browser",
	"google-chrome", "google-chrome-stable", "chrome",
	"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
	"/Applications/Chromium.app/Contents/MacOS/Chromium",
}

// Find returns the path of a Chromium (or Chrome) binary: $TOKENPULSE_CHROMIUM
// when set, otherwise the first of the usual paths and names on $PATH. The
// error wraps ErrNotFound and says how to install one.
func Find() (string, error) {
	if p := os.Getenv(EnvPath); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w: %w", EnvPath, p, ErrNotFound, err)
		}
		return p, nil
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w (tried %s on $PATH); install it (Debian/Ubuntu: apt-get install chromium) or set %s", ErrNotFound, "chromium, chromium-browser, google-chrome", EnvPath)
}

// Flags are the command-line switches every browser gets, beyond the
// fresh --user-data-dir.
var Flags = []string{
	"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
	"disable-background-networking", "disable-component-update", "disable-sync",
	"disable-dev-shm-usage", "disable-breakpad", "disable-crash-reporter", "hide-scrollbars", "mute-audio",
	"no-default-browser-check",
}

// Start starts a headless Chromium and returns a chromedp context whose
// tab belongs to it. cancel stops the browser and removes its user-data
// directory; call it when done. width is the viewport width in CSS pixels
// (0: 1280).
func Start(ctx context.Context, width int) (tab context.Context, cancel context.CancelFunc, err error) {
	path, err := Find()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "tokenpulse-chromium-")
	if err != nil {
		return nil, nil, fmt.Errorf("user-data dir: %w", err)
	}
	if width <= 0 {
		width = 1280
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.UserDataDir(dir), chromedp.WindowSize(width, 900)}
	for _, f := range Flags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	tctx, tcancel := chromedp.NewContext(actx)
	stop := func() {
		tcancel()
		acancel()
		os.RemoveAll(dir)
	}
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(tctx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("start %s: %w", path, err)
	}
	return tctx, stop, nil
}

// FileURL returns the file:// URL of a local path.
func FileURL(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String(), nil
}

// Open navigates tab to the local file at path (HTML or SVG) and waits
// until its document is loaded.
func Open(tab context.Context, path string) error {
	u, err := FileURL(path)
	if err != nil {
		return err
	}
	if err := chromedp.Do(tab, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS(":root"))); err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	return nil
}

// Capture takes a full-page PNG screenshot of what tab shows.
func Capture(tab context.Context) ([]byte, error) {
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	return png, nil
}

// Screenshot opens the local HTML file htmlPath in a fresh headless
// Chromium and writes a full-page PNG screenshot of it to pngPath.
func Screenshot(ctx context.Context, htmlPath, pngPath string) error {
	tab, cancel, err := Start(ctx, 0)
	if err != nil {
		return err
	}
	defer cancel()
	if err := Open(tab, htmlPath); err != nil {
		return err
	}
	png, err := Capture(tab)
	if err != nil {
		return err
	}
	if err := os.WriteFile(pngPath, png, 0o644); err != nil {
		return fmt.Errorf("write screenshot: %w", err)
	}
	return nil
}
