package report

import (
	"fmt"
	"io"
)

// keyLines explain, one line each, the terminal table's terms that a new
// reader cannot guess (DESIGN.md "Definitions" states them in full).
var keyLines = [][2]string{
	{"ttft", "time to first token: request sent to first content event"},
	{"vis ttft", "when a person sees it: the first display frame after it (60 Hz + 16 ms batching); ttft is when it arrived"},
	{"tpot", "time per output token after the first"},
	{"gap", "time between content events; gap max is the worst stall, gap std their spread"},
	{"tok/event", "tokens per streamed event; above 1 the server batches, so gaps are per event"},
	{"goodput", "share of requests that met every per-request objective"},
	{"server's own account", "the server's timings beside the client's: the difference is network and client; the share of prompt tokens it reused from its prompt cache"},
}

// TextKey writes the short key of the terminal summary's terms, one line
// each, for a reader meeting the table for the first time.
func TextKey(w io.Writer) error {
	if _, err := fmt.Fprintln(w, "\nkey (times in ms)"); err != nil {
		return err
	}
	for _, k := range keyLines {
		if _, err := fmt.Fprintf(w, "  %-21s %s\n", k[0], k[1]); err != nil {
			return err
		}
	}
	return nil
}
