package svg

import (
	"encoding/xml"
	"math"
	"strings"
	"testing"
)

func TestNum(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"integer", 12, "12"},
		{"rounds to two decimals", 1.23456, "1.23"},
		{"drops trailing zeros", 1.50, "1.5"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"tiny negative", -0.001, "0"},
		{"NaN", math.NaN(), "0"},
		{"infinity", math.Inf(1), "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Num(tt.in); got != tt.want {
				t.Errorf("Num(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCanvasIsWellFormedXML(t *testing.T) {
	c := New(100, 50, `a <b> & "c"`)
	c.Group(Class("g"))
	c.Rect(1, 2, -3, 4, A("data-x", `"q"`))
	c.Text(5, 6, "1 < 2 & 3")
	p := &PathData{}
	c.Path(p.MoveTo(0, 0).H(10).V(5).Close())
	b := c.Bytes() // closes the open group
	var root struct {
		XMLName xml.Name
		Title   string `xml:"title"`
		G       struct {
			Rect struct {
				Width string `xml:"width,attr"`
			} `xml:"rect"`
			Text string `xml:"text"`
			Path struct {
				D string `xml:"d,attr"`
			} `xml:"path"`
		} `xml:"g"`
	}
	if err := xml.Unmarshal(b, &root); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, b)
	}
	if got, want := root.Title, `a <b> & "c"`; got != want {
		t.Errorf("title = %q, want %q", got, want)
	}
	if got, want := root.G.Rect.Width, "0"; got != want {
		t.Errorf("negative width clamped to %q, want %q", got, want)
	}
	if got, want := root.G.Text, "1 < 2 & 3"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if got, want := root.G.Path.D, "M0,0H10V5Z"; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
}

func TestScales(t *testing.T) {
	lin := Linear{D0: 0, D1: 100, R0: 10, R1: 210}
	if got, want := lin.Map(50), 110.0; got != want {
		t.Errorf("Linear.Map(50) = %v, want %v", got, want)
	}
	lg := Log{D0: 1, D1: 1000, R0: 0, R1: 300}
	if got, want := lg.Map(10), 100.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("Log.Map(10) = %v, want %v", got, want)
	}
	if got, want := lg.Map(0), 0.0; got != want {
		t.Errorf("Log.Map(0) = %v, want %v", got, want)
	}
	if got, want := fmtFloats(lg.Ticks()), "1 10 100 1000"; got != want {
		t.Errorf("Log.Ticks over 3 decades = %s, want %s", got, want)
	}
	if got, want := fmtFloats(Log{D0: 10, D1: 300}.Ticks()), "10 20 50 100 200"; got != want {
		t.Errorf("Log.Ticks over 1.5 decades = %s, want %s", got, want)
	}
	if got, want := fmtFloats(Linear{D0: 0, D1: 330}.Ticks(4)), "0 100 200 300"; got != want {
		t.Errorf("Linear.Ticks = %s, want %s", got, want)
	}
}

func TestLogBins(t *testing.T) {
	edges := LogBins(15, 300, 4)
	if len(edges) < 2 {
		t.Fatalf("got %d edges", len(edges))
	}
	if edges[0] > 15 || edges[len(edges)-1] < 300 {
		t.Errorf("edges %v do not cover [15, 300]", edges)
	}
	for i := 1; i < len(edges); i++ {
		r := edges[i] / edges[i-1]
		if math.Abs(r-math.Pow(10, 0.25)) > 1e-9 {
			t.Errorf("edge ratio %d = %v, want 10^(1/4)", i, r)
		}
	}
}

func TestNiceMax(t *testing.T) {
	for in, want := range map[float64]float64{7: 10, 12: 20, 230: 250, 400: 500, 1000: 1000} {
		if got := NiceMax(in); got != want {
			t.Errorf("NiceMax(%v) = %v, want %v", in, got, want)
		}
	}
}

func fmtFloats(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = Label(x)
	}
	return strings.Join(s, " ")
}

func TestFit(t *testing.T) {
	for _, tt := range []struct {
		v, top, step float64
	}{
		{64, 70, 10}, // a sweep to 64 requests/s: not an axis to 100
		{16, 20, 5},
		{100, 120, 20},
		{3, 3.5, 0.5},
		{0, 1, 1},
	} {
		top, step := Fit(tt.v, 0.05, 8)
		if math.Abs(top-tt.top) > 1e-9 || math.Abs(step-tt.step) > 1e-9 {
			t.Errorf("Fit(%g) = %g step %g, want %g step %g", tt.v, top, step, tt.top, tt.step)
		}
		if tt.v > 0 && (top < tt.v || top/step > 8+1e-9) {
			t.Errorf("Fit(%g) = %g step %g: does not hold the value in at most 8 steps", tt.v, top, step)
		}
	}
	if got := (Linear{D0: 0, D1: 70}).Every(10); len(got) != 8 || got[7] != 70 || Label(got[0]) != "0" {
		t.Errorf("Every(10) on [0, 70] = %v", got)
	}
}
