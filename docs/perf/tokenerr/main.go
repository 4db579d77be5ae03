// Command tokenerr prints the per-token timing error of run files
// against the server's emit stamps (tokenpulse mock and serve send
// them): for every token after the first of every successful measured
// request, |(arrival[i] − arrival[0]) − (emit[i] − emit[0])|, the error
// stream's BenchmarkMeasurementError reports, as p50, p99 and max in ms.
//
//	go run ./docs/perf/tokenerr RUN.json...
package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

func main() {
	for _, path := range os.Args[1:] {
		run, err := runfile.Load(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var errs []float64
		reqs := 0
		for _, q := range run.Requests {
			if q.Cold || q.Warmup || !q.OK() || len(q.ServerTimesNS) != len(q.TokenTimesNS) {
				continue
			}
			reqs++
			for i := 1; i < len(q.TokenTimesNS); i++ {
				e := (q.TokenTimesNS[i] - q.TokenTimesNS[0]) - (q.ServerTimesNS[i] - q.ServerTimesNS[0])
				errs = append(errs, float64(max(e, -e))/1e6)
			}
		}
		slices.Sort(errs)
		if len(errs) == 0 {
			fmt.Printf("%s: no token with an emit stamp\n", path)
			continue
		}
		fmt.Printf("%s: %d requests, %d tokens: per-token error p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
			path, reqs, len(errs), stats.Percentile(errs, 50), stats.Percentile(errs, 99), errs[len(errs)-1])
	}
}
