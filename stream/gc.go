package stream

import (
	"os"
	"runtime"
	"runtime/debug"
)

// HoldGC keeps the garbage collector from running during a measurement,
// unless the process's Go memory nears a limit, and returns a function
// that restores the collector's settings.
//
// A collection cycle takes one of a small machine's cores for its mark
// phase and stops the world briefly; the goroutines left waiting for a
// core meanwhile read, stamp and (for an in-process server such as the
// embedded one or the mock) write tokens late. On 2 cores at 256 streams
// that is the whole of the timestamp error above a fraction of a
// millisecond (BenchmarkMeasurementError with and without it). The
// client allocates almost nothing per event, so a run's heap grows
// slowly; the limit (at least 256 MiB, and twice what the process holds
// when called) makes the collector run again before memory becomes a
// problem.
//
// HoldGC does nothing when the user set GOGC or GOMEMLIMIT: theirs rule.
func HoldGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	limit := max(int64(256<<20), 2*int64(ms.Sys))
	prevLimit := debug.SetMemoryLimit(limit)
	prevPercent := debug.SetGCPercent(-1)
	return func() {
		debug.SetGCPercent(prevPercent)
		debug.SetMemoryLimit(prevLimit)
	}
}
