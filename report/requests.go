package report

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// maxRequestRows is the most requests the requests table lists (in run
// order; the run file holds every one).
const maxRequestRows = 1000

// sortKey is one order the requests table can be read in: a column whose
// header is a label for a radio button, and a CSS variable per row that
// holds the row's rank in that order.
type sortKey struct {
	ID, Label, Var string
	Checked        bool
}

// requestsView is the table of every warm request, sortable without a
// script: each row carries its rank under each order as a CSS variable,
// and a radio button per order (checked through its column's label) sets
// the rows' flex order (see the report's CSS). Without CSS it is a plain
// table in run order.
type requestsView struct {
	Keys    []sortKey
	Columns []string // the columns' names; those of Keys are links
	// KeyAt maps a column index to its sort key's ID ("" when none).
	KeyAt []string
	Rows  []requestRow
	// Shown and Total count the rows listed and the warm requests.
	Shown, Total int
}

type requestRow struct {
	Cells  []string
	Failed bool
	// Ranks is the style attribute that sets each order's variable.
	Ranks template.CSS
}

// newRequestsView lists the warm requests of r (at most maxRequestRows,
// in run order) with their TTFT, E2E, TPOT and longest gap, ranked
// slowest first under each.
func newRequestsView(r *runfile.Run) *requestsView {
	views := measure.Views(r, measure.Overall)
	if len(views) == 0 {
		return nil
	}
	v := &requestsView{Total: len(views)}
	if len(views) > maxRequestRows {
		views = views[:maxRequestRows]
	}
	v.Shown = len(views)
	keys := []struct {
		key   sortKey
		col   int
		value func(*measure.View) (float64, bool)
	}{
		{sortKey{ID: "sort-run", Label: "#", Var: "--run", Checked: true}, 0, nil},
		{sortKey{ID: "sort-ttft", Label: "TTFT", Var: "--ttft"}, 3, func(w *measure.View) (float64, bool) { return w.TTFTMs, w.OK && w.HasTTFT }},
		{sortKey{ID: "sort-e2e", Label: "E2E", Var: "--e2e"}, 4, func(w *measure.View) (float64, bool) { return w.E2EMs, w.OK }},
		{sortKey{ID: "sort-tpot", Label: "TPOT", Var: "--tpot"}, 6, func(w *measure.View) (float64, bool) { return w.TPOTMs, w.OK && w.HasTPOT }},
		{sortKey{ID: "sort-gap", Label: "longest gap", Var: "--gap"}, 7, func(w *measure.View) (float64, bool) {
			g, ok := w.MaxGapMs()
			return g, w.OK && ok
		}},
	}
	v.Columns = []string{"#", "prompt", "category", "TTFT", "E2E", "tokens", "TPOT", "max gap", "error"}
	v.KeyAt = make([]string, len(v.Columns))
	ranks := make([][]int, len(keys))
	for k, key := range keys {
		v.Keys = append(v.Keys, key.key)
		v.KeyAt[key.col] = key.key.ID
		if key.value == nil {
			continue
		}
		xs, ok := make([]float64, len(views)), make([]bool, len(views))
		for i := range views {
			xs[i], ok[i] = key.value(&views[i])
		}
		ranks[k] = stats.RanksDesc(xs, ok)
	}
	cell := func(w *measure.View, f func(*measure.View) (float64, bool)) string {
		if x, ok := f(w); ok {
			return fmtMS(x)
		}
		return "-"
	}
	for i := range views {
		w := &views[i]
		q := w.Req
		var style strings.Builder
		for k, key := range keys {
			rank := i + 1
			if ranks[k] != nil {
				rank = ranks[k][i]
			}
			fmt.Fprintf(&style, "%s:%d;", key.key.Var, rank)
		}
		row := requestRow{Failed: !w.OK, Ranks: template.CSS(style.String()), Cells: []string{
			strconv.Itoa(q.Index), q.PromptID, q.Category,
			cell(w, keys[1].value), cell(w, keys[2].value), strconv.Itoa(w.OutputTokens),
			cell(w, keys[3].value), cell(w, keys[4].value), errorCell(q),
		}}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// errorCell is a failed request's error kind and message, "" for one
// that succeeded.
func errorCell(q *runfile.Request) string {
	if q.OK() {
		return ""
	}
	s := q.Error
	if q.ErrorKind != "" && !strings.HasPrefix(s, string(q.ErrorKind)) {
		s = string(q.ErrorKind) + ": " + s
	}
	return s
}
