package sweep

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func steps(loads []float64, ttfts []float64) []Step {
	out := make([]Step, len(loads))
	for i := range loads {
		out[i] = Step{Load: loads[i], Requests: 10, TTFTP95Ms: ttfts[i], Passed: true}
	}
	return out
}

func TestFindKnee(t *testing.T) {
	rule := DefaultKneeRule()
	tests := []struct {
		name        string
		loads, p95s []float64
		want        float64 // 0: no knee
		below       float64
	}{
		{"queueing starts at 8", []float64{1, 2, 4, 8, 16}, []float64{100, 104, 150, 230, 900}, 8, 4},
		{"unsorted steps (a search)", []float64{4, 16, 1, 8, 2}, []float64{150, 900, 100, 230, 104}, 8, 4},
		{"flat: no knee", []float64{1, 2, 4}, []float64{100, 120, 180}, 0, 0},
		// A fast target: 3 ms doubling to 7 ms is jitter, under the floor.
		{"the floor", []float64{1, 2, 4}, []float64{3, 7, 14}, 4, 2},
		{"one step", []float64{1}, []float64{10}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := FindKnee(steps(tt.loads, tt.p95s), rule)
			switch {
			case tt.want == 0 && k != nil:
				t.Errorf("knee at %g, want none", k.Load)
			case tt.want != 0 && k == nil:
				t.Errorf("no knee, want %g", tt.want)
			case k != nil && (k.Load != tt.want || k.Below != tt.below):
				t.Errorf("knee between %g and %g, want between %g and %g", k.Below, k.Load, tt.below, tt.want)
			}
		})
	}
	// A step whose requests all failed has no TTFT and is skipped.
	st := steps([]float64{1, 2, 4}, []float64{10, 0, 50})
	st[1].Errors = st[1].Requests
	if k := FindKnee(st, rule); k == nil || k.Load != 4 || k.Below != 1 {
		t.Errorf("knee %+v, want between 1 and 4", k)
	}
}

func TestSearchFindsTheEdge(t *testing.T) {
	for _, edge := range []float64{0.3, 1, 7.3, 40, 1000} {
		s := &Search{Start: 1, Resolution: 0.1, MaxSteps: 20, MinRate: 1.0 / 64}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		var tried []float64
		for r, ok := s.Next(); ok; r, ok = s.Next() {
			tried = append(tried, r)
			s.Record(r, r <= edge)
		}
		res := s.Result()
		if !res.Converged || res.Capacity > edge || res.FailedAt <= edge || res.FailedAt-res.Capacity > 0.1*res.Capacity {
			t.Errorf("edge %g: %+v after %v", edge, res, tried)
		}
		// Doubling then bisecting: log2 of the bracket, then log2 of 1/resolution.
		if bound := int(math.Ceil(math.Abs(math.Log2(edge)))) + 2 + int(math.Ceil(math.Log2(1/0.1))) + 1; len(tried) > bound {
			t.Errorf("edge %g: %d steps, more than %d", edge, len(tried), bound)
		}
	}
	// The step budget stops it, and says it did not converge.
	s := &Search{Start: 1, Resolution: 0.01, MaxSteps: 4, MinRate: 1.0 / 64}
	for r, ok := s.Next(); ok; r, ok = s.Next() {
		s.Record(r, r <= 5)
	}
	if res := s.Result(); res.Steps != 4 || res.Converged || res.Capacity != 4 || res.FailedAt != 8 {
		t.Errorf("budget of 4: %+v, want 4 steps between 4 and 8, not converged", res)
	}
	// Nothing passes: it halves down to MinRate and reports no capacity.
	s = &Search{Start: 1, Resolution: 0.1, MaxSteps: 20, MinRate: 0.1}
	for r, ok := s.Next(); ok; r, ok = s.Next() {
		s.Record(r, false)
	}
	if res := s.Result(); res.Capacity != 0 || !strings.Contains(res.String(), "no rate passed") {
		t.Errorf("nothing passes: %+v %q", res, res)
	}
	for _, bad := range []Search{{Start: 0, Resolution: 0.1, MaxSteps: 5}, {Start: 1, Resolution: 1, MaxSteps: 5}, {Start: 1, Resolution: 0.1, MaxSteps: 1}} {
		if bad.Validate() == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

func TestReportMarksKneeAndCapacity(t *testing.T) {
	sw := &Sweep{SchemaVersion: SchemaVersion, Kind: KindRate, Suite: "en-assistant", Steps: steps([]float64{4, 8, 2, 16}, []float64{150, 230, 100, 900})}
	sw.Steps[3].Passed, sw.Steps[3].Crossed = false, []string{"[category:short] ttft.p95 < 250ms"}
	sw.Knee = FindKnee(sw.Steps, DefaultKneeRule())
	sw.Search = &SearchResult{Capacity: 8, FailedAt: 16, Resolution: 0.1}
	var page bytes.Buffer
	if err := sw.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	for _, want := range []string{"knee 4–8", "capacity 8", "[category:short] ttft.p95 &lt; 250ms", `class="fail"`, "Goodput"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, c := range sw.Charts() {
		d := xml.NewDecoder(bytes.NewReader(c.SVG))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
		// One marker per step, in order of load.
		if n := strings.Count(string(c.SVG), "<circle"); n != 4 {
			t.Errorf("%s: %d points, want 4", c.Name, n)
		}
	}
	var text bytes.Buffer
	if err := sw.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	if !strings.HasPrefix(strings.TrimSpace(lines[1]), "2 ") || !strings.HasPrefix(strings.TrimSpace(lines[4]), "16 ") {
		t.Errorf("rows not in order of load:\n%s", text.String())
	}
	p := filepath.Join(t.TempDir(), FileName)
	if err := sw.Write(p); err != nil {
		t.Fatal(err)
	}
	back, err := Load(filepath.Dir(p))
	if err != nil || len(back.Steps) != 4 || back.Knee == nil || back.Knee.Load != 8 || back.Search.Capacity != 8 {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}
