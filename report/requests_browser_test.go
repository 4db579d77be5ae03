package report

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/tokenpulse/tokenpulse/internal/browser"
	"github.com/tokenpulse/tokenpulse/report/reporttest"
)

// TestRequestsTableSortsWithoutScript opens the report in headless
// Chromium, clicks the TTFT column's name and checks that the row shown
// first is the slowest request, with no script on the page: the sorting
// is CSS alone.
func TestRequestsTableSortsWithoutScript(t *testing.T) {
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and %v", err)
		}
		t.Skip(err)
	}
	dir := t.TempDir()
	if err := WriteAll(dir, reporttest.StallRun(), Options{Formats: []string{"html"}}); err != nil {
		t.Fatal(err)
	}
	tab, cancel, err := browser.Start(context.Background(), 1100)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	if err := browser.Open(tab, filepath.Join(dir, HTMLFile)); err != nil {
		t.Fatal(err)
	}
	type view struct {
		First   []string `json:"first"`
		Slowest string   `json:"slowest"`
		Scripts int      `json:"scripts"`
	}
	// The row drawn highest, and the largest TTFT of any row.
	const probe = `(() => {
		const rows = [...document.querySelectorAll("#requests ~ .sortable tbody tr")];
		const top = rows.slice().sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)[0];
		const ttft = r => parseFloat(r.cells[3].textContent) || -1;
		const slowest = rows.slice().sort((a, b) => ttft(b) - ttft(a))[0];
		return {first: [...top.cells].map(c => c.textContent), slowest: slowest.cells[0].textContent, scripts: document.scripts.length};
	})()`
	before, err := chromedp.Run(tab, chromedp.Evaluate[view](probe))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(tab, chromedp.Click(`label[for="sort-ttft"]`)); err != nil {
		t.Fatal(err)
	}
	after, err := chromedp.Run(tab, chromedp.Evaluate[view](probe))
	if err != nil {
		t.Fatal(err)
	}
	if after.Scripts != 0 {
		t.Errorf("page runs %d scripts, want none", after.Scripts)
	}
	if after.First[0] != after.Slowest {
		t.Errorf("after sorting by TTFT the first row is request %s (%v), want the slowest, %s", after.First[0], after.First, after.Slowest)
	}
	if before.First[0] == after.First[0] {
		t.Errorf("the first row did not change (%s): the click sorted nothing", before.First[0])
	}
}
