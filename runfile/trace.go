package runfile

// TraceConfig is the production trace a replay sent (bench --trace).
type TraceConfig struct {
	// File is the trace's path as given, Format its format.
	File   string `json:"file"`
	Format string `json:"format"`
	// Speed divides the recorded times (2: twice as fast).
	Speed float64 `json:"speed"`
	// WindowFromMS and WindowToMS bound the slice replayed, in the
	// trace's own time (0, 0: the whole trace).
	WindowFromMS int64 `json:"window_from_ms,omitempty"`
	WindowToMS   int64 `json:"window_to_ms,omitempty"`
	// Entries is the number of requests of the slice (the whole run's,
	// every shard's).
	Entries int `json:"entries"`
	// Vocabulary names the tokenizer the prompts were written in, and
	// says whether it was the bundled one or the target's.
	Vocabulary string `json:"vocabulary"`
	// SHA256 is the trace file's content hash (hex): its identity, which
	// the suite's name ("trace:NAME@HASH12") carries, so that the same
	// trace by another path is the same workload.
	SHA256 string `json:"sha256,omitempty"`
}

// TraceMatch is how closely a replay kept its trace: its arrivals and
// its answers' lengths (DESIGN.md, "Trace replay").
type TraceMatch struct {
	// KS is the two-sample Kolmogorov–Smirnov distance between the
	// recorded inter-arrivals (scaled by the speed) and the achieved
	// ones (from the requests' actual starts): 0 is the same
	// distribution, 1 disjoint. Arrivals is the requests it compares.
	KS       float64 `json:"ks"`
	Arrivals int     `json:"arrivals"`
	// Answered is the successful measured requests; AtLength those whose
	// answer reached the recorded output length (max_tokens).
	Answered int `json:"answered"`
	AtLength int `json:"at_length"`
}
