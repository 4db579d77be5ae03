// Package flame turns a CPU profile (pprof's profile.proto, as
// runtime/pprof and /debug/pprof/profile write it) into a flame graph: the
// sampled call stacks merged into a tree, each frame as wide as its share
// of the samples, drawn as SVG with the report's own drawing kit.
//
//	p, err := flame.Read(f)                     // cpu.pprof
//	g, err := flame.Build(p, flame.Filter{Key: "tokenpulse", Value: "server"})
//	os.Stdout.Write(g.SVG(1000))
//
// Samples may be kept by a pprof label (Filter), so that a profile of a
// process that also ran the measuring client shows the server alone.
package flame

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// Read parses a profile, gzipped or not.
func Read(r io.Reader) (*profile.Profile, error) {
	p, err := profile.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("reading the profile: %w", err)
	}
	return p, nil
}

// Filter keeps the samples whose label Key has the value Value; the zero
// Filter keeps every sample.
type Filter struct{ Key, Value string }

// keeps reports whether s passes the filter.
func (f Filter) keeps(s *profile.Sample) bool {
	if f.Key == "" {
		return true
	}
	return slices.Contains(s.Label[f.Key], f.Value)
}

// Node is one frame of the graph: a function called along one path from
// the root. Its Total covers its callees; Self is what it spent itself.
type Node struct {
	// Name is the function's full name ("net/http.(*conn).serve").
	Name string
	// Self and Total are in the graph's unit (nanoseconds of CPU for a CPU
	// profile).
	Self, Total int64
	// Children are its callees, widest first (ties by name).
	Children []*Node
}

// Graph is a flame graph.
type Graph struct {
	// Root is the whole: its Total is the sum of the kept samples.
	Root *Node
	// Unit is the unit of the values ("nanoseconds", or "count").
	Unit string
	// Samples and KeptSamples count the profile's samples and those the
	// filter kept; ProfileTotal and Root.Total are their values.
	Samples, KeptSamples int
	ProfileTotal         int64
	// DurationNanos is how long the profile ran (0 when it does not say).
	DurationNanos int64
}

// KeptShare is the share of the profile's value the graph holds (1 with
// no filter), 0 for an empty profile.
func (g *Graph) KeptShare() float64 {
	if g.ProfileTotal == 0 {
		return 0
	}
	return float64(g.Root.Total) / float64(g.ProfileTotal)
}

// ErrNoSamples is returned by Build for a profile with no sample value to
// draw (nothing ran, or the filter kept nothing).
var ErrNoSamples = errors.New("flame: the profile holds no samples")

// Build merges the samples of p that f keeps into a graph, weighting each
// stack by its last sample value (CPU time for a CPU profile: the
// "cpu/nanoseconds" value, not the sample count). Inlined calls are
// frames of their own, as in the source.
func Build(p *profile.Profile, f Filter) (*Graph, error) {
	if len(p.SampleType) == 0 {
		return nil, ErrNoSamples
	}
	vi := len(p.SampleType) - 1
	g := &Graph{Root: &Node{Name: "all"}, Unit: p.SampleType[vi].Unit, Samples: len(p.Sample), DurationNanos: p.DurationNanos}
	var stack []string
	for _, s := range p.Sample {
		v := s.Value[vi]
		g.ProfileTotal += v
		if !f.keeps(s) {
			continue
		}
		g.KeptSamples++
		stack = stack[:0]
		// Locations run leaf first, and a location's lines innermost
		// first: walk both backwards for root first.
		for i := len(s.Location) - 1; i >= 0; i-- {
			loc := s.Location[i]
			if len(loc.Line) == 0 {
				stack = append(stack, fmt.Sprintf("0x%x", loc.Address))
				continue
			}
			for j := len(loc.Line) - 1; j >= 0; j-- {
				name := "?"
				if fn := loc.Line[j].Function; fn != nil {
					name = fn.Name
				}
				stack = append(stack, name)
			}
		}
		g.Root.add(stack, v)
	}
	if g.Root.Total == 0 {
		return nil, ErrNoSamples
	}
	g.Root.sort()
	return g, nil
}

// add adds value v along stack (root first) below n.
func (n *Node) add(stack []string, v int64) {
	n.Total += v
	if len(stack) == 0 {
		n.Self += v
		return
	}
	for _, c := range n.Children {
		if c.Name == stack[0] {
			c.add(stack[1:], v)
			return
		}
	}
	c := &Node{Name: stack[0]}
	n.Children = append(n.Children, c)
	c.add(stack[1:], v)
}

// sort orders every node's children widest first, ties by name, so that
// the same profile always draws the same graph.
func (n *Node) sort() {
	slices.SortFunc(n.Children, func(a, b *Node) int {
		if c := cmp.Compare(b.Total, a.Total); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	for _, c := range n.Children {
		c.sort()
	}
}

// Depth is the number of frames on the graph's deepest path, the root
// included.
func (n *Node) Depth() int {
	d := 0
	for _, c := range n.Children {
		d = max(d, c.Depth())
	}
	return d + 1
}

// Func is one function's share of a graph.
type Func struct {
	Name string
	// Self is the time spent in the function itself; Total with its
	// callees (counted once where the function recurses).
	Self, Total int64
}

// Top returns the n functions with the most self time, most first (ties
// by name); functions with no self time are left out.
func (g *Graph) Top(n int) []Func {
	self := map[string]int64{}
	total := map[string]int64{}
	var walk func(*Node, map[string]bool)
	walk = func(x *Node, onPath map[string]bool) {
		if x != g.Root {
			self[x.Name] += x.Self
			if !onPath[x.Name] {
				total[x.Name] += x.Total
				onPath[x.Name] = true
				defer delete(onPath, x.Name)
			}
		}
		for _, c := range x.Children {
			walk(c, onPath)
		}
	}
	walk(g.Root, map[string]bool{})
	out := make([]Func, 0, len(self))
	for name, s := range self {
		if s == 0 {
			continue
		}
		out = append(out, Func{Name: name, Self: s, Total: total[name]})
	}
	slices.SortFunc(out, func(a, b Func) int {
		if c := cmp.Compare(b.Self, a.Self); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out[:min(n, len(out))]
}

// Package is the package of a function's full name:
// "net/http.(*conn).serve" is in "net/http",
// "github.com/a/b/engine.matVec" in "github.com/a/b/engine".
func Package(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	if dot := strings.IndexByte(fn[slash+1:], '.'); dot >= 0 {
		return fn[:slash+1+dot]
	}
	return ""
}

// Short is a function's name without its package path: "engine.matVec",
// "http.(*conn).serve".
func Short(fn string) string {
	return fn[strings.LastIndexByte(fn, '/')+1:]
}
