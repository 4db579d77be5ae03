package runfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestJournalRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, JournalFile)
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	w, err := CreateJournal(path, JournalHeader{
		Tool: Tool{Name: "tokenpulse"}, StartedAt: start,
		Target: Target{URL: "http://x", Model: "m"}, Device: Device{Hostname: "h", Tier: "entry"},
		Config:         Config{Suite: "s", Requests: 3, SuiteThresholds: map[string][]string{"a": {"ttft.p95 < 1s"}}},
		TierThresholds: []string{"gap.max <= 200ms"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The measured requests finish out of order; the scenario's come last
	// whatever their slot.
	add := func(phase string, slot int, id string) {
		t.Helper()
		if err := w.Append(phase, slot, &Request{RequestID: id, Index: 99, TTFTNS: 5, E2ENS: 5, ContentEvents: 1, TokenTimesNS: []int64{5}}); err != nil {
			t.Fatal(err)
		}
	}
	add(PhaseCold, 0, "cold")
	add(PhaseWarmup, 1, "warm")
	add(PhaseMeasure, 2, "m2")
	add(PhaseMeasure, 0, "m0")
	add(PhaseScenario, 0, "s0")
	add(PhaseMeasure, 1, "m1")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateJournal(path, JournalHeader{}); err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("a second journal over the first: %v, want a refusal", err)
	}

	j, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Notes) != 0 {
		t.Errorf("notes on a clean journal: %q", j.Notes)
	}
	run := j.Run()
	var ids []string
	for i, r := range run.Requests {
		ids = append(ids, r.RequestID)
		if r.Index != i {
			t.Errorf("request %s: index %d, want %d", r.RequestID, r.Index, i)
		}
	}
	if got, want := strings.Join(ids, " "), "cold warm m0 m1 m2 s0"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if !run.Interrupted || !run.StartedAt.Equal(start) || !run.FinishedAt.After(start) || run.Target.Model != "m" || run.Config.Requests != 3 {
		t.Errorf("run: interrupted %v, started %v, finished %v, target %+v, config %+v", run.Interrupted, run.StartedAt, run.FinishedAt, run.Target, run.Config)
	}
	if j.Header.TierThresholds[0] != "gap.max <= 200ms" || j.Header.Config.SuiteThresholds["a"][0] != "ttft.p95 < 1s" {
		t.Errorf("header lost what judging needs: %+v", j.Header)
	}
}

func TestJournalTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	w, err := CreateJournal(path, JournalHeader{Tool: Tool{Name: "tokenpulse"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := w.Append(PhaseMeasure, i, &Request{RequestID: fmt.Sprint("r", i)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"phase":"measure","slot":3,"at":"2026-11-29T10:00:00Z","request":{"request_id":"r`)
	f.Close()

	j, err := ReadJournal(path)
	if err != nil {
		t.Fatalf("a torn last line failed the read: %v", err)
	}
	if len(j.Entries) != 3 {
		t.Errorf("%d entries, want the 3 whole lines", len(j.Entries))
	}
	if len(j.Notes) != 1 || !strings.Contains(j.Notes[0], "last line") {
		t.Errorf("notes %q, want one about the last line", j.Notes)
	}
}

func TestJournalRefusesOtherFiles(t *testing.T) {
	for name, body := range map[string]string{
		"empty":       "",
		"run file":    "{\n  \"schema_version\": 1\n}\n",
		"torn header": `{"journal":1,"tool":{"na`,
	} {
		if _, err := DecodeJournal(name, []byte(body)); err == nil {
			t.Errorf("%s: decoded as a journal", name)
		}
	}
}

// TestJournalUpdates: what became known after the header (a browser
// run's page, the profile) is journaled as update lines, a later one's
// fields replacing an earlier one's, and the rebuilt run has them; a
// journal without updates (as written before they existed) loads as it
// did.
func TestJournalUpdates(t *testing.T) {
	path := filepath.Join(t.TempDir(), JournalFile)
	w, err := CreateJournal(path, JournalHeader{Tool: Tool{Name: "tokenpulse"}, Config: Config{Suite: "s", Requests: 2}})
	if err != nil {
		t.Fatal(err)
	}
	req := func(id string) *Request {
		return &Request{RequestID: id, TTFTNS: 5, E2ENS: 5, ContentEvents: 1, TokenTimesNS: []int64{5}}
	}
	w.Update(JournalUpdate{Browser: &Browser{Page: "http://page", Renders: []string{"page"}}})
	w.Append(PhaseMeasure, 0, req("m0"))
	w.Update(JournalUpdate{}) // writes nothing
	w.Update(JournalUpdate{Browser: &Browser{Page: "http://page", Renders: []string{"page"}, CPUThrottle: 4}, Profile: &Profile{File: "cpu.pprof", Source: "embedded", DurationMS: 20}})
	w.Append(PhaseMeasure, 1, req("m1"))
	w.Close()
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n != 5 {
		t.Errorf("%d lines, want 5 (header, 2 updates, 2 requests):\n%s", n, b)
	}
	j, err := ReadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Notes) != 0 || len(j.Entries) != 2 {
		t.Errorf("notes %q, %d entries; want none and 2", j.Notes, len(j.Entries))
	}
	run := j.Run()
	if br := run.Config.Browser; br == nil || br.Page != "http://page" || br.CPUThrottle != 4 {
		t.Errorf("config.browser %+v, want the last update's", br)
	}
	if p := run.Profile; p == nil || p.File != "cpu.pprof" || p.DurationMS != 20 {
		t.Errorf("profile %+v, want the update's", p)
	}

	// An update that claims a phase is no request and no update.
	bad := strings.Replace(string(b), `"update":{"browser"`, `"phase":"measure","update":{"browser"`, 1)
	if j, err := DecodeJournal(path, []byte(bad)); err != nil || len(j.Notes) != 1 || j.Update.Browser.CPUThrottle != 4 {
		t.Errorf("an update with a phase: %v, notes %v; want it ignored with a note", err, j)
	}

	// The journal of an older tokenpulse: no update line.
	var old []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(l, `"update"`) {
			old = append(old, l)
		}
	}
	j, err = DecodeJournal(path, []byte(strings.Join(old, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if run := j.Run(); len(run.Requests) != 2 || run.Config.Browser != nil || run.Profile != nil || len(j.Notes) != 0 {
		t.Errorf("old journal: %d requests, browser %v, profile %v, notes %q", len(run.Requests), run.Config.Browser, run.Profile, j.Notes)
	}
}
