package flame

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// synthetic builds a CPU profile of these stacks (leaf first), each with
// its CPU nanoseconds and its "role" label.
func synthetic(t *testing.T, stacks []struct {
	frames []string
	ns     int64
	role   string
}) *profile.Profile {
	t.Helper()
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        10_000_000,
		DurationNanos: 2e9,
	}
	funcs := map[string]*profile.Function{}
	locs := map[string]*profile.Location{}
	for _, s := range stacks {
		var ls []*profile.Location
		for _, name := range s.frames {
			loc, ok := locs[name]
			if !ok {
				fn := &profile.Function{ID: uint64(len(funcs) + 1), Name: name, SystemName: name}
				funcs[name] = fn
				p.Function = append(p.Function, fn)
				loc = &profile.Location{ID: uint64(len(locs) + 1), Address: uint64(0x1000 + len(locs)), Line: []profile.Line{{Function: fn, Line: 1}}}
				locs[name] = loc
				p.Location = append(p.Location, loc)
			}
			ls = append(ls, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: ls, Value: []int64{s.ns / 10_000_000, s.ns}, Label: map[string][]string{"role": {s.role}}})
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	// Round-trip through the wire format, as a file on disk would be.
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

type stack = struct {
	frames []string
	ns     int64
	role   string
}

const (
	matVec = "github.com/tokenpulse/tokenpulse/internal/engine.matVec"
	decode = "github.com/tokenpulse/tokenpulse/internal/engine.(*Session).Decode"
	write  = "net/http.(*response).Write"
	serve  = "net/http.(*conn).serve"
	client = "github.com/tokenpulse/tokenpulse/stream.(*Client).Stream"
	gc     = "runtime.gcBgMarkWorker"
)

func sampleStacks() []stack {
	return []stack{
		{[]string{matVec, decode, serve}, 600e6, "server"},
		{[]string{decode, serve}, 100e6, "server"},
		{[]string{write, serve}, 200e6, "server"},
		{[]string{client}, 300e6, "client"},
		{[]string{gc}, 100e6, ""},
	}
}

func TestBuildMergesStacksRootFirst(t *testing.T) {
	g, err := Build(synthetic(t, sampleStacks()), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Root.Total != 1300e6 || g.ProfileTotal != 1300e6 || g.KeptShare() != 1 {
		t.Fatalf("root %d, profile %d, kept %v; want 1.3e9 of 1.3e9", g.Root.Total, g.ProfileTotal, g.KeptShare())
	}
	// Widest first: serve (900 ms), client (300), gc (100).
	var names []string
	for _, c := range g.Root.Children {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != serve+","+client+","+gc {
		t.Fatalf("root's children %v: want serve, client, gc (widest first)", names)
	}
	srv := g.Root.Children[0]
	if srv.Total != 900e6 || srv.Self != 0 || len(srv.Children) != 2 {
		t.Fatalf("serve: total %d self %d, %d children", srv.Total, srv.Self, len(srv.Children))
	}
	dec := srv.Children[0]
	if dec.Name != decode || dec.Total != 700e6 || dec.Self != 100e6 || dec.Children[0].Name != matVec || dec.Children[0].Total != 600e6 {
		t.Fatalf("decode: %+v", dec)
	}
	if d := g.Root.Depth(); d != 4 {
		t.Fatalf("depth %d, want 4 (all, serve, decode, matVec)", d)
	}
	top := g.Top(2)
	if top[0].Name != matVec || top[0].Self != 600e6 || top[1].Name != client || top[1].Self != 300e6 {
		t.Fatalf("top: %+v", top)
	}
}

func TestBuildFiltersByLabel(t *testing.T) {
	g, err := Build(synthetic(t, sampleStacks()), Filter{Key: "role", Value: "server"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Root.Total != 900e6 || g.KeptSamples != 3 || g.Samples != 5 {
		t.Fatalf("kept %d of %d samples, total %d: want the 3 server samples, 900 ms", g.KeptSamples, g.Samples, g.Root.Total)
	}
	if got, want := g.KeptShare(), 900.0/1300; got < want-1e-9 || got > want+1e-9 {
		t.Fatalf("kept share %v, want %v", got, want)
	}
	if len(g.Root.Children) != 1 || g.Root.Children[0].Name != serve {
		t.Fatalf("a filtered graph holds only the server's stacks: %+v", g.Root.Children)
	}
	if _, err := Build(synthetic(t, sampleStacks()), Filter{Key: "role", Value: "nobody"}); err != ErrNoSamples {
		t.Fatalf("a filter that keeps nothing: %v, want ErrNoSamples", err)
	}
}

// frame is a drawn frame: its tooltip's first line and its rectangle.
type frame struct {
	name    string
	x, w, y float64
}

func drawnFrames(t *testing.T, doc []byte) []frame {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var out []frame
	var cur *frame
	inTitle := false
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch {
			case e.Name.Local == "g":
				out = append(out, frame{})
				cur = &out[len(out)-1]
			case e.Name.Local == "title" && cur != nil:
				inTitle = true
			case e.Name.Local == "rect" && cur != nil:
				for _, a := range e.Attr {
					v, _ := strconv.ParseFloat(a.Value, 64)
					switch a.Name.Local {
					case "x":
						cur.x = v
					case "width":
						cur.w = v
					case "y":
						cur.y = v
					}
				}
			}
		case xml.CharData:
			if inTitle {
				cur.name, _, _ = strings.Cut(string(e), "\n")
				cur.name, _, _ = strings.Cut(cur.name, ":")
			}
		case xml.EndElement:
			inTitle = false
			if e.Name.Local == "g" {
				cur = nil
			}
		}
	}
	return out
}

func TestSVGWidthsFollowShares(t *testing.T) {
	g, err := Build(synthetic(t, sampleStacks()), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	const width = 1316 // 1300 px of frames between the 8 px margins
	frames := drawnFrames(t, g.SVG(width, "CPU"))
	byName := map[string]frame{}
	for _, f := range frames {
		byName[f.name] = f
	}
	for name, want := range map[string]float64{"all": 1300, serve: 900, decode: 700, matVec: 600, write: 200, client: 300, gc: 100} {
		f, ok := byName[name]
		if !ok {
			t.Fatalf("%s not drawn; frames %+v", name, frames)
		}
		if f.w < want-0.01 || f.w > want+0.01 {
			t.Errorf("%s is %v px wide, want %v (its share of 1300 px)", name, f.w, want)
		}
	}
	// Children start at their parent's left edge, widest first, and sit
	// one row above it.
	if byName[serve].x != byName["all"].x || byName[client].x != byName[serve].x+900 || byName[gc].x != byName[client].x+300 {
		t.Errorf("root's children not laid out widest first from the left: %+v", frames)
	}
	if byName[decode].x != byName[serve].x || byName[write].x != byName[serve].x+700 {
		t.Errorf("serve's callees misplaced: decode at %v, write at %v", byName[decode].x, byName[write].x)
	}
	if byName[decode].y != byName[serve].y-rowH || byName[serve].y != byName["all"].y-rowH {
		t.Errorf("callees must sit a row above their callers: all %v, serve %v, decode %v", byName["all"].y, byName[serve].y, byName[decode].y)
	}
	if !bytes.Contains(g.SVG(width, "CPU"), []byte("engine.matVec")) {
		t.Error("a wide frame must carry its short name")
	}
}

func TestPackageAndShort(t *testing.T) {
	for fn, want := range map[string][2]string{
		"net/http.(*conn).serve":       {"net/http", "http.(*conn).serve"},
		"runtime.mallocgc":             {"runtime", "runtime.mallocgc"},
		matVec:                         {"github.com/tokenpulse/tokenpulse/internal/engine", "engine.matVec"},
		"github.com/x/y.(*T).M.func1":  {"github.com/x/y", "y.(*T).M.func1"},
		"main.main":                    {"main", "main.main"},
		"internal/runtime/atomic.Load": {"internal/runtime/atomic", "atomic.Load"},
	} {
		if p, s := Package(fn), Short(fn); p != want[0] || s != want[1] {
			t.Errorf("%s: package %q short %q, want %q %q", fn, p, s, want[0], want[1])
		}
	}
	if kindOf(Package(matVec)) != kindOwn || kindOf("runtime") != kindRuntime || kindOf("net/http") != kindStd || kindOf("github.com/x/y") != kindOther {
		t.Error("package kinds wrong")
	}
}

func TestFit(t *testing.T) {
	if got := fit("engine.matVec", 200); got != "engine.matVec" {
		t.Errorf("wide: %q", got)
	}
	if got := fit("engine.matVec", 6*charW); got != "engin…" {
		t.Errorf("narrow: %q", got)
	}
	if got := fit("engine.matVec", 2*charW); got != "" {
		t.Errorf("too narrow: %q", got)
	}
}

func TestSVGHeightFollowsDrawnFrames(t *testing.T) {
	deep := []string{"d10", "d9", "d8", "d7", "d6", "d5", "d4", "d3", "d2", "d1", serve}
	g, err := Build(synthetic(t, []stack{
		{[]string{decode, serve}, 1e9, ""},
		{deep, 10_000, ""}, // 10 µs of 1 s: far below a pixel
	}), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Root.Depth() != 12 {
		t.Fatalf("depth %d, want 12", g.Root.Depth())
	}
	doc := g.SVG(1016, "CPU")
	want := `height="` + strconv.Itoa(headH+3*rowH+legendH+margin) + `"`
	if !bytes.Contains(doc, []byte(want)) {
		t.Errorf("a frame too narrow to draw must not make the graph taller: want %s in\n%s", want, doc[:200])
	}
	if bytes.Contains(doc, []byte("d10")) {
		t.Error("a frame narrower than a pixel's fraction is drawn")
	}
}
