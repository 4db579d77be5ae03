package trace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/suite"
	"github.com/tokenpulse/tokenpulse/tokencount"
)

func TestReplayWindowAndSpeed(t *testing.T) {
	var b strings.Builder
	b.WriteString("Timestamp,Model,Request tokens,Response tokens\n")
	for i := range 10 {
		fmt.Fprintf(&b, "%d,m,%d,%d\n", 100+i*10, 5+i, 3+i) // seconds 100..190
	}
	path := filepath.Join(t.TempDir(), "burst.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokencount.Bundled()
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPrompter(tok, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Seconds 20 to 50 of the trace (its entries at 20, 30, 40), twice
	// as fast, counted from 20 s.
	rp, err := Scan(path, Auto, Options{}, Slice{From: 20 * time.Second, To: 50 * time.Second, Speed: 1}, p)
	if err != nil {
		t.Fatal(err)
	}
	if rp.Len() != 3 || rp.Format() != BurstGPT {
		t.Fatalf("%d entries as %s, want 3 as burstgpt", rp.Len(), rp.Format())
	}
	var at []time.Duration
	var ps []suite.Prompt
	if err := rp.WithSpeed(2).Arrivals(func(d time.Duration, q suite.Prompt) bool {
		at, ps = append(at, d), append(ps, q)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 5 * time.Second, 10 * time.Second}
	for i := range want {
		if i >= len(at) || at[i] != want[i] {
			t.Fatalf("arrivals %v, want %v", at, want)
		}
		line := 4 + i // the header is line 1, second 120 line 4
		if ps[i].ID != fmt.Sprintf("line %d", line) || ps[i].MaxTokens != 3+line-2 || tok.Count(ps[i].Text) != 5+line-2 || ps[i].Category != Category {
			t.Errorf("arrival %d: %+v (%d tokens)", i, ps[i], tok.Count(ps[i].Text))
		}
	}
	if h, err := rp.Head(); err != nil || len(h) != 3 || h[0].ID != "line 4" {
		t.Errorf("head %v, %v", h, err)
	}
}

func TestArrivalsStopEarlyAndReportErrors(t *testing.T) {
	var b strings.Builder
	for i := range 500 {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": 8, "output_length": 4}`+"\n", i)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, _ := tokencount.Bundled()
	p, _ := NewPrompter(tok, 1)
	rp, err := Scan(path, Auto, Options{}, Slice{Speed: 1}, p)
	if err != nil || rp.Len() != 500 {
		t.Fatalf("%v, %d entries", err, rp.Len())
	}
	n := 0
	if err := rp.Arrivals(func(time.Duration, suite.Prompt) bool { n++; return n < 3 }); err != nil || n != 3 {
		t.Errorf("stopped at the third: %d yielded, %v", n, err)
	}
	// The file is cut after the scan: the replay reports the read error.
	if err := os.WriteFile(path, []byte(b.String()[:200]+"{broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n = 0
	err = rp.Arrivals(func(time.Duration, suite.Prompt) bool { n++; return true })
	var le *LineError
	if !errors.As(err, &le) || le.Line != 4 {
		t.Errorf("after %d arrivals: error %v, want line 4's", n, err)
	}
}
