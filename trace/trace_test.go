package trace

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// read returns every entry of src read as format f, or the first error.
func read(t *testing.T, src string, f Format, opts Options) ([]Entry, Format, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(src), "t.trace", f, opts)
	if err != nil {
		return nil, "", err
	}
	var out []Entry
	for {
		e, err := r.Next()
		if err == io.EOF {
			return out, r.Format, nil
		}
		if err != nil {
			return out, r.Format, err
		}
		out = append(out, e)
	}
}

func TestFormatsAndAutoDetect(t *testing.T) {
	cases := []struct {
		name, src string
		format    Format
		want      []Entry
	}{
		{"mooncake", `{"timestamp": 0, "input_length": 700, "output_length": 12, "hash_ids": [1, 2]}
{"timestamp": 250, "input_length": 30, "output_length": 5, "hash_ids": [1]}

{"timestamp": 250.5, "input_length": 9, "output_length": 1}
`, Mooncake, []Entry{
			{Line: 1, At: 0, Input: 700, Output: 12, HashIDs: []int64{1, 2}},
			{Line: 2, At: 250 * time.Millisecond, Input: 30, Output: 5, HashIDs: []int64{1}},
			{Line: 4, At: 250500 * time.Microsecond, Input: 9, Output: 1},
		}},
		{"azure", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n", Azure, []Entry{
			{Line: 2, At: 0, Input: 374, Output: 44},
			{Line: 3, At: 4314579000, Input: 396, Output: 109},
		}},
		{"burstgpt", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n45,GPT-4,1087,230,1317,API log\n", BurstGPT, []Entry{
			{Line: 2, At: 0, Input: 472, Output: 18, Model: "ChatGPT"},
			{Line: 3, At: 40 * time.Second, Input: 1087, Output: 230, Model: "GPT-4"},
		}},
	}
	for _, c := range cases {
		for _, f := range []Format{Auto, c.format} {
			got, format, err := read(t, c.src, f, Options{})
			if err != nil {
				t.Fatalf("%s as %s: %v", c.name, f, err)
			}
			if format != c.format {
				t.Errorf("%s as %s: format %s", c.name, f, format)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%s: %d entries, want %d: %+v", c.name, len(got), len(c.want), got)
			}
			for i := range got {
				g, w := got[i], c.want[i]
				if g.Line != w.Line || g.At != w.At || g.Input != w.Input || g.Output != w.Output || g.Model != w.Model || len(g.HashIDs) != len(w.HashIDs) {
					t.Errorf("%s entry %d = %+v, want %+v", c.name, i, g, w)
				}
			}
		}
	}
}

func TestRefusals(t *testing.T) {
	const azHead = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	const bgHead = "Timestamp,Model,Request tokens,Response tokens\n"
	cases := []struct {
		name, src string
		opts      Options
		want      string // the error, file and line first
	}{
		{"unsorted", `{"timestamp": 10, "input_length": 5, "output_length": 5}
{"timestamp": 9, "input_length": 5, "output_length": 5}`, Options{}, "t.trace:2: timestamp 1ms before the previous line's: a trace must be sorted"},
		{"negative", `{"timestamp": -3, "input_length": 5, "output_length": 5}`, Options{}, "t.trace:1: negative timestamp"},
		{"missing json", `{"timestamp": 0, "input_length": 5, "output_length": 5}
{"timestamp": 1, "output_length": 5}`, Options{}, "t.trace:2: missing input_length"},
		{"not json", `{"timestamp": 0, "input_length": 5, "output_length": 5}
{"timestamp": 1,`, Options{}, "t.trace:2: not a JSON object"},
		{"zero input", `{"timestamp": 0, "input_length": 0, "output_length": 5}`, Options{}, "t.trace:1: input length 0"},
		{"zero output", "\n\n" + `{"timestamp": 0, "input_length": 4, "output_length": 0}`, Options{}, "t.trace:3: output length 0"},
		{"past ctx", `{"timestamp": 0, "input_length": 5, "output_length": 5}
{"timestamp": 1, "input_length": 500, "output_length": 13}`, Options{Ctx: 512}, "t.trace:2: input 500 + output 13 tokens is past the context of 512"},
		{"azure missing column", "TIMESTAMP,ContextTokens\n2023-11-16 18:15:46.68,3\n", Options{}, "t.trace:1: the azure header lacks the column(s) generatedtokens"},
		{"azure missing field", azHead + "2023-11-16 18:15:46.68,3,4\n2023-11-16 18:15:47.68,,4\n", Options{}, "t.trace:3: missing ContextTokens"},
		{"azure bad time", azHead + "yesterday,3,4\n", Options{}, "t.trace:2: TIMESTAMP \"yesterday\""},
		{"azure unsorted", azHead + "2023-11-16 18:15:46.68,3,4\n2023-11-16 18:15:45.68,3,4\n", Options{}, "t.trace:3: timestamp 1s before"},
		{"burstgpt negative", bgHead + "-1,ChatGPT,3,4\n", Options{}, "t.trace:2: negative timestamp"},
		{"burstgpt only failures", bgHead + "1,ChatGPT,3,0\n2,ChatGPT,5,0\n", Options{}, "t.trace: the trace holds no request (2 failed requests, 0 response tokens, skipped)"},
		{"burstgpt short row", bgHead + "1,ChatGPT,3,4\n2,ChatGPT,3\n", Options{}, "t.trace:3: missing Response tokens"},
		{"burstgpt not a number", bgHead + "1,ChatGPT,three,4\n", Options{}, "t.trace:2: Request tokens \"three\""},
		{"empty", "\n\n", Options{}, "t.trace: the trace holds no request"},
		{"unknown", "a,b,c\n1,2,3\n", Options{}, "cannot tell the trace's format"},
	}
	for _, c := range cases {
		_, _, err := read(t, c.src, Auto, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if strings.HasPrefix(c.want, "t.trace:") && strings.Contains(c.want, ": ") && c.name != "empty" && c.name != "unknown" && c.name != "burstgpt only failures" {
			var le *LineError
			if !errors.As(err, &le) {
				t.Errorf("%s: %T is no LineError", c.name, err)
			}
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": Auto, "AUTO": Auto, "mooncake": Mooncake, "Azure": Azure, "burstgpt": BurstGPT} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("sharegpt"); err == nil {
		t.Error("sharegpt accepted")
	}
}

// TestBurstGPTSkipsFailedRequests: BurstGPT logs a failed request with 0
// response tokens; a replay passes over those rows (counted), where any
// other format's 0 output is refused at its line.
func TestBurstGPTSkipsFailedRequests(t *testing.T) {
	const bgHead = "Timestamp,Model,Request tokens,Response tokens\n"
	r, err := NewReader(strings.NewReader(bgHead+"1,ChatGPT,3,4\n2,ChatGPT,3,0\n3,GPT-4,7,0\n4,ChatGPT,5,6\n"), "t.trace", Auto, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, e.Line)
	}
	if fmt.Sprint(lines) != "[2 5]" || r.Skipped() != 2 {
		t.Errorf("entries on lines %v, %d skipped; want lines [2 5], 2 skipped", lines, r.Skipped())
	}
}

// TestHostileSizesRefused: a line longer than MaxLineBytes (a JSONL line
// or a CSV row) is refused at its line before it is held whole, and so
// is a request past MaxTokens even with no --ctx to check it against
// (a remote target), rather than a prompt of billions of tokens written.
func TestHostileSizesRefused(t *testing.T) {
	long := strings.Repeat("1, ", MaxLineBytes/3+10)
	cases := []struct{ name, src, want string }{
		{"jsonl line", `{"timestamp": 0, "input_length": 5, "output_length": 5}` + "\n" +
			`{"timestamp": 1, "input_length": 5, "output_length": 5, "hash_ids": [` + long + `1]}` + "\n", "t.trace:2: a line of more than"},
		{"csv row", "Timestamp,Model,Request tokens,Response tokens\n1,ChatGPT,3,4\n2,\"" + long + "\",3,4\n", "t.trace:3: a line of more than"},
		{"tokens", `{"timestamp": 0, "input_length": 2000000000, "output_length": 5}`, "t.trace:1: input 2000000000 + output 5 tokens is past the most a request may ask"},
	}
	for _, c := range cases {
		_, _, err := read(t, c.src, Auto, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
