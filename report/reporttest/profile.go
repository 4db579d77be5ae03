package reporttest

import (
	"os"
	"path/filepath"

	"github.com/google/pprof/profile"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// Functions of the profile WriteProfile writes, and their CPU time.
const (
	ProfileServerFunc = "github.com/tokenpulse/tokenpulse/internal/engine.matVec"
	ProfileCallerFunc = "github.com/tokenpulse/tokenpulse/internal/engine.(*Model).forward"
	ProfileClientFunc = "github.com/tokenpulse/tokenpulse/stream.(*Client).read"
	ProfileServerNS   = 600e6 // matVec under forward, labelled the server's
	ProfileClientNS   = 200e6 // the client's read, unlabelled
)

// WriteProfile writes a CPU profile as bench records for an embedded run
// into dir/cpu.pprof, sets r.Profile to it and returns its path: the
// server's samples (ProfileServerFunc called by ProfileCallerFunc)
// carry the label tokenpulse=server, the client's (ProfileClientFunc) do
// not.
func WriteProfile(dir string, r *runfile.Run) (string, error) {
	fns := []*profile.Function{
		{ID: 1, Name: ProfileCallerFunc},
		{ID: 2, Name: ProfileServerFunc},
		{ID: 3, Name: ProfileClientFunc},
	}
	locs := make([]*profile.Location, len(fns))
	for i, fn := range fns {
		locs[i] = &profile.Location{ID: uint64(i + 1), Address: uint64(0x100 * (i + 1)), Line: []profile.Line{{Function: fn, Line: 1}}}
	}
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        1e7,
		DurationNanos: 2e9,
		Function:      fns,
		Location:      locs,
		Sample: []*profile.Sample{
			{Location: []*profile.Location{locs[1], locs[0]}, Value: []int64{60, ProfileServerNS}, Label: map[string][]string{"tokenpulse": {"server"}}},
			{Location: []*profile.Location{locs[2]}, Value: []int64{20, ProfileClientNS}},
		},
	}
	path := filepath.Join(dir, "cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return "", err
	}
	r.Profile = &runfile.Profile{File: "cpu.pprof", Source: "embedded", Label: "tokenpulse=server", DurationMS: 2000}
	return path, f.Close()
}
