package abtest

import (
	"path/filepath"
	"testing"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
)

// TestMeasureJudgesBothSides: an A/B measured with the library alone
// writes both sides' runs summarised and judged (the error budget's
// verdict, the goodput), and its summary.
func TestMeasureJudgesBothSides(t *testing.T) {
	dir := t.TempDir()
	res, err := Measure(t.Context(), Config{
		Spec: runner.Spec{Suite: testSuite(t), Workload: bench.Workload{Requests: 4, Warmup: 1, Cold: true, Seed: 3, Concurrency: 1}},
		Dir:  dir,
	}, Arm{Label: "A", Path: "a.gguf", Client: mockClient(t, 8)}, Arm{Label: "B", Path: "b.gguf", Client: mockClient(t, 8)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != nil || res.Summary.Agreement.Pairs != 4 {
		t.Fatalf("stopped %v, agreement %+v", res.Stopped, res.Summary.Agreement)
	}
	for _, side := range []string{"a", "b"} {
		run, err := runfile.Load(filepath.Join(dir, side, runner.FileName))
		if err != nil {
			t.Fatal(err)
		}
		if len(run.Verdicts) == 0 || run.Summary.Goodput == nil || run.Summary.Overall.Requests != 4 {
			t.Errorf("%s: %d verdicts, goodput %v, %d warm requests; want judged, 4", side, len(run.Verdicts), run.Summary.Goodput, run.Summary.Overall.Requests)
		}
	}
	if _, err := runfile.ReadJSON(filepath.Join(dir, FileName), FileName, &Summary{}); err != nil {
		t.Error(err)
	}
}
