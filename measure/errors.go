package measure

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tokenpulse/tokenpulse/runfile"
)

// ErrorGroup is the failed requests of a run that share one error
// message: the reports show "connection refused ×20" once instead of
// twenty offenders each saying "error: connect".
type ErrorGroup struct {
	// Kind and Message are the requests' ErrorKind and Error.
	Kind    runfile.ErrorKind
	Message string
	// Count is how many requests failed so; Warmup of them were warm-up
	// requests (which no figure counts, but whose cause is the same).
	Count, Warmup int
	// First is the request id of the first of them, in run order.
	First string
}

// String is "kind: message ×count" (the kind left out when the message
// starts with it), with the warm-up share when any.
func (g ErrorGroup) String() string {
	s := g.Message
	if g.Kind != "" && !strings.HasPrefix(s, string(g.Kind)) {
		s = string(g.Kind) + ": " + s
	}
	s += fmt.Sprintf(" ×%d", g.Count)
	if g.Warmup > 0 {
		s += fmt.Sprintf(" (%d warm-up)", g.Warmup)
	}
	return s
}

// ErrorGroups groups the failed requests of run by their error message,
// the most frequent first (ties in order of first appearance). Requests
// aborted on purpose are left out: their ending is the scenario's, not a
// fault. Warm-up requests are in, counted apart in Warmup, since a dead
// target fails them first.
func ErrorGroups(run *runfile.Run) []ErrorGroup {
	var out []ErrorGroup
	at := map[[2]string]int{}
	for i := range run.Requests {
		q := &run.Requests[i]
		if q.OK() || Aborted.Has(q) {
			continue
		}
		key := [2]string{string(q.ErrorKind), q.Error}
		k, ok := at[key]
		if !ok {
			k = len(out)
			at[key] = k
			out = append(out, ErrorGroup{Kind: q.ErrorKind, Message: q.Error, First: q.RequestID})
		}
		out[k].Count++
		if q.Warmup {
			out[k].Warmup++
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}
