package abtest

import (
	"context"
	"github.com/tokenpulse/tokenpulse/compare"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
	"github.com/tokenpulse/tokenpulse/suite"
)

// mockClient serves the mock with tokens tokens per answer and returns a
// client of it.
func mockClient(t *testing.T, tokens int) *stream.Client {
	t.Helper()
	srv, err := server.New(mock.New(mock.Profile{TTFT: time.Millisecond, ITL: 100 * time.Microsecond, Tokens: tokens, TokensPerEvent: 1}, nil), server.Options{Parallel: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.WarmUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &stream.Client{BaseURL: hs.URL, Model: "mock"}
}

// logged notes which side each request went to, in order.
type logged struct {
	side string
	log  *[]string
	mu   *sync.Mutex
	d    bench.Doer
}

func (l logged) Do(ctx context.Context, req stream.Request) *stream.Trace {
	l.mu.Lock()
	*l.log = append(*l.log, l.side)
	l.mu.Unlock()
	return l.d.Do(ctx, req)
}

func testSuite(t *testing.T) *suite.Suite {
	t.Helper()
	s, err := suite.Parse("ab.yaml", []byte(`name: ab
language: en
categories:
  - name: c
    weight: 1
    max_tokens: 16
    prompts:
      - {id: p1, text: "one"}
      - {id: p2, text: "two"}
      - {id: p3, text: "three"}
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func run(t *testing.T, tokensA, tokensB int) (ra, rb *runfile.Run, recA, recB *Recorder, order []string) {
	t.Helper()
	var mu sync.Mutex
	recA = &Recorder{Doer: mockClient(t, tokensA)}
	recB = &Recorder{Doer: mockClient(t, tokensB)}
	a := bench.Config{Client: logged{"A", &order, &mu, recA}}
	b := bench.Config{Client: logged{"B", &order, &mu, recB}}
	w := bench.Workload{Suite: testSuite(t), Requests: 6, Warmup: 1, Cold: true, Seed: 3, Concurrency: 1}
	var steps []Step
	qa, qb, err := Run(t.Context(), a, b, w, func(s Step) { steps = append(steps, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 16 || steps[15].Done != 16 || steps[15].Total != 16 {
		t.Fatalf("progress: %d steps, last %+v; want 16 of 16", len(steps), steps[len(steps)-1])
	}
	ra, rb = &runfile.Run{Requests: qa}, &runfile.Run{Requests: qb}
	measure.Summarize(ra)
	measure.Summarize(rb)
	return ra, rb, recA, recB, order
}

func TestRunInterleavesABBA(t *testing.T) {
	ra, rb, _, _, order := run(t, 5, 5)
	// cold A B, warm-up A B, then measured A B, B A, A B, B A, A B, B A.
	if got, want := strings.Join(order, ""), "ABAB"+"ABBAABBAABBA"; got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	for _, r := range []*runfile.Run{ra, rb} {
		if len(r.Requests) != 8 || !r.Requests[0].Cold || !r.Requests[1].Warmup || r.Requests[2].Cold || r.Requests[2].Warmup {
			t.Fatalf("requests: want cold, warm-up, 6 measured; got %d", len(r.Requests))
		}
		for i, q := range r.Requests {
			if q.Index != i {
				t.Fatalf("request %d has index %d", i, q.Index)
			}
		}
	}
	for i := range ra.Requests {
		if ra.Requests[i].PromptID != rb.Requests[i].PromptID {
			t.Fatalf("request %d: A asked %s, B %s: want the same prompts", i, ra.Requests[i].PromptID, rb.Requests[i].PromptID)
		}
	}
}

func TestAgreeIdenticalOutputs(t *testing.T) {
	ra, rb, recA, recB, _ := run(t, 5, 5)
	g := Agree(ra, rb, recA.Output, recB.Output)
	if g.Pairs != 6 || g.Identical != 6 || g.IdenticalShare != 1 || g.MeanCommonPrefix != 5 || g.MeanLengthA != 5 || g.MeanLengthB != 5 {
		t.Fatalf("agreement %+v: want 6 identical answers of 5 tokens", g)
	}
}

func TestAgreeCountsTheCommonPrefix(t *testing.T) {
	// B stops after 3 tokens of the same words: a prefix of A's 5.
	ra, rb, recA, recB, _ := run(t, 5, 3)
	g := Agree(ra, rb, recA.Output, recB.Output)
	if g.Pairs != 6 || g.Identical != 0 || g.MeanCommonPrefix != 3 || g.MeanLengthA != 5 || g.MeanLengthB != 3 {
		t.Fatalf("agreement %+v: want 6 pairs, none identical, 3 tokens in common", g)
	}
	if got := recA.Output(ra.Requests[2].RequestID); len(got) != 5 || strings.Join(got, "") == "" {
		t.Fatalf("recorded output %q: want 5 events of text", got)
	}
}

func TestCommonPrefix(t *testing.T) {
	for _, tc := range []struct {
		a, b []string
		want int
	}{
		{nil, nil, 0},
		{[]string{"a", "b"}, []string{"a", "b"}, 2},
		{[]string{"a", "b", "c"}, []string{"a", "x", "c"}, 1},
		{[]string{"a"}, []string{"a", "b"}, 1},
	} {
		if got := commonPrefix(tc.a, tc.b); got != tc.want {
			t.Errorf("commonPrefix(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestWriteTextNamesTheBundledModel(t *testing.T) {
	s := Summary{
		A: Side{Label: "A", Quantization: "F32: 48"},
		B: Side{Label: "B", Model: "/m/x-Q4_0.gguf", Quantization: "Q4_0: 32", SizeBytes: 2048},
	}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"A = the bundled model (F32: 48)\n", "B = x-Q4_0.gguf (Q4_0: 32, 2.0 KiB)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "A = .") || strings.Contains(out, "0 B)") {
		t.Errorf("summary names the bundled model as a path or a 0 B file:\n%s", out)
	}
}

// TestWriteTextSaysTheRule: a change within tolerance names the
// tolerance it was held to, and the summary states the rule applied
// (an A/B once printed "within tolerance" without saying which).
func TestWriteTextSaysTheRule(t *testing.T) {
	opts := compare.DefaultOptions()
	s := Summary{
		A: Side{Label: "A", TPOTMeanMS: 20}, B: Side{Label: "B", TPOTMeanMS: 21},
		Comparison: compare.Report{Options: opts, Evidence: compare.EvidenceRequests, Changes: []compare.Change{
			{Scope: "overall", Metric: "tpot.mean", Unit: "ms", Base: 20, New: 21, P: 1e-6, Status: compare.StatusWithin, Tolerance: 0.10},
		}},
	}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"within tolerance (tolerance 10%)", "verdict rule: a regression is worse than the base by more than 10% (25% for p95s, 50% for gap.max"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
