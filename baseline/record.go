package baseline

import (
	"strings"

	"github.com/tokenpulse/tokenpulse/compare"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// Compare compares cur with base (compare.Runs) and notes every setting
// in which they differ (Notes) in place of compare's own note on their
// identities, which takes "http://h/v1" and "http://h" for two targets.
func Compare(base, cur *runfile.Run, opts compare.Options) compare.Report {
	return withNotes(compare.Runs(base, cur, opts), base, cur)
}

// CompareHistory judges cur against history, the earlier comparable runs
// newest first (compare.Against: a noise band once there are
// opts.NoiseRuns of them), with history[0] as the base whose settings the
// notes compare.
func CompareHistory(history []*runfile.Run, cur *runfile.Run, opts compare.Options) compare.Report {
	return withNotes(compare.Against(history, cur, opts), history[0], cur)
}

// withNotes replaces compare's note on the runs' identities with every
// setting in which base and cur differ.
func withNotes(rep compare.Report, base, cur *runfile.Run) compare.Report {
	notes := Notes(base, cur)
	for _, n := range rep.Notes {
		if strings.HasPrefix(n, "the runs differ in ") && strings.HasSuffix(n, ": the comparison may not mean what it seems") {
			continue
		}
		notes = append(notes, n)
	}
	rep.Notes = notes
	return rep
}

// Record turns compare's report into the run file's record of the
// comparison: against is what was asked ("last" or a history id), name
// and id name the base in the history (id 0 when it has none).
func Record(rep compare.Report, against, name string, id int64) *runfile.Comparison {
	c := &runfile.Comparison{
		Against:       against,
		Base:          name,
		BaseID:        id,
		BaseStartedAt: rep.Base.StartedAt,
		Tolerance:     rep.Options.Tolerance,
		FloorMS:       rep.Options.FloorMS,
		Alpha:         rep.Options.Alpha,
		Notes:         append([]string(nil), rep.Notes...),
		Evidence:      rep.Evidence,
		NoiseRuns:     rep.NoiseRuns,
		NoiseWanted:   rep.NoiseWanted,
		Rule:          rep.Rule(),
	}
	for _, x := range rep.Changes {
		c.Changes = append(c.Changes, x)
		if x.Status == compare.StatusRegressed {
			c.Regressions++
		}
	}
	return c
}

// Skipped is the record of a comparison that was asked for and not made,
// with why.
func Skipped(against, why string) *runfile.Comparison {
	return &runfile.Comparison{Against: against, Skipped: why}
}
