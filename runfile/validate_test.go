package runfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// saneRun is a run of n measured requests of 3 tokens each, as bench
// writes them.
func saneRun(n int) *Run {
	r := &Run{SchemaVersion: SchemaVersion, Config: Config{Suite: "s", Requests: n}}
	for i := range n {
		r.Requests = append(r.Requests, Request{
			Index: i, RequestID: fmt.Sprintf("tp-%d", i), Status: 200,
			SentNS: 1e5, HeadersNS: 4e6, FirstByteNS: 4e6, TTFTNS: 5e6, E2ENS: 8e6,
			OutputTokens: 3, TokenSource: "events", ContentEvents: 3, TokenTimesNS: []int64{5e6, 6e6, 7e6},
		})
	}
	return r
}

// wantInvalid checks that err is an *InvalidError whose text holds each
// of want.
func wantInvalid(t *testing.T, err error, want ...string) {
	t.Helper()
	var ie *InvalidError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want an *InvalidError", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

func TestValidateRefusesAbsurdRequests(t *testing.T) {
	if err := saneRun(4).Validate(); err != nil {
		t.Fatalf("a sane run refused: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(q *Request)
		field string
	}{
		{"negative ttft", func(q *Request) { q.TTFTNS, q.TokenTimesNS[0] = -5e6, -5e6 }, "ttft_ns: -5000000 is negative"},
		{"tokens in reverse", func(q *Request) { q.TokenTimesNS = []int64{7e6, 6e6, 5e6}; q.TTFTNS = 7e6 }, "token_times_ns[1]"},
		{"int64 max", func(q *Request) { q.E2ENS = math.MaxInt64 }, "e2e_ns: 9223372036854775807 ns"},
		{"ttft not the first token", func(q *Request) { q.TTFTNS = 1e6 }, "ttft_ns: 1000000 differs from the first token's time"},
		{"first byte after first token", func(q *Request) { q.FirstByteNS = 6e6 }, "first_byte_ns"},
		{"end before last token", func(q *Request) { q.E2ENS = 6e6 }, "e2e_ns"},
		{"events and times disagree", func(q *Request) { q.ContentEvents = 30 }, "content_events"},
		{"tokens and events disagree", func(q *Request) { q.OutputTokens = 3000 }, "output_tokens"},
		{"counts for other events", func(q *Request) { q.TokenCounts = []int{1} }, "token_counts"},
		{"negative server time", func(q *Request) { q.Server = &ServerTimings{QueueNS: -1} }, "server.queue_ns"},
		{"ttft without tokens", func(q *Request) { q.TokenTimesNS, q.ContentEvents, q.OutputTokens = nil, 0, 0 }, "ttft_ns: 5000000 with no token_times_ns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := saneRun(4)
			tc.edit(&r.Requests[2])
			wantInvalid(t, r.Validate(), "request 2 (id tp-2)", tc.field)
		})
	}
}

func TestValidateRefusesAbsurdSets(t *testing.T) {
	r := saneRun(4)
	r.Requests[3].RequestID = "tp-1"
	wantInvalid(t, r.Validate(), "request 3 (id tp-1): request_id: repeats request 1")

	r = saneRun(4)
	r.Requests[2].Index = 7
	wantInvalid(t, r.Validate(), "request 2", "index")

	r = saneRun(4)
	r.Config.Requests = 3
	wantInvalid(t, r.Validate(), "request 3", "measured request 4 of a run configured for 3")

	r = saneRun(4)
	r.Requests[0].Cold, r.Requests[1].Cold = true, true
	wantInvalid(t, r.Validate(), "request 1", "second cold request")
}

// TestLoadRefusesAbsurdRunFiles reads the hostile files of issue 18 back
// through Load: each is refused with the file and the request named.
func TestLoadRefusesAbsurdRunFiles(t *testing.T) {
	dir := t.TempDir()
	r := saneRun(40)
	r.Requests[5].TTFTNS, r.Requests[5].TokenTimesNS[0] = -5e6, -5e6
	p := filepath.Join(dir, "neg.json")
	if err := r.Write(p); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	wantInvalid(t, err, p, "request 5 (id tp-5)", "ttft_ns")
}

// TestDecodeRefusesTooManyRequests feeds MaxRequests+1 requests: refused
// while decoding, before the last is decoded.
func TestDecodeRefusesTooManyRequests(t *testing.T) {
	b := []byte(`{"schema_version":1,"requests":[` + strings.Repeat(`{},`, MaxRequests) + `{}]}`)
	_, err := Decode(b)
	wantInvalid(t, err, fmt.Sprint(MaxRequests+1, " requests or more"))
}

// TestLoadRefusesHugeFile refuses a file past MaxFileBytes from its size
// alone (a sparse file: nothing is written).
func TestLoadRefusesHugeFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, MaxFileBytes+1); err != nil {
		t.Skip("no sparse file:", err)
	}
	_, err := Load(p)
	wantInvalid(t, err, p, "MaxFileBytes")
	_, err = ReadJournal(p)
	wantInvalid(t, err, p, "MaxFileBytes")
}

// journalOf writes a journal of a run of -n n, its entries as given.
func journalOf(t *testing.T, n int, entries ...JournalEntry) string {
	t.Helper()
	h, err := json.Marshal(JournalHeader{Journal: JournalVersion, SchemaVersion: SchemaVersion, Config: Config{Suite: "s", Requests: n}})
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{string(h)}
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	p := filepath.Join(t.TempDir(), JournalFile)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadJournalRefusesAbsurdEntries(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	measured := func(slot int, q Request) JournalEntry {
		return JournalEntry{Phase: PhaseMeasure, Slot: slot, At: at, Request: q}
	}
	sane := saneRun(40).Requests

	// A sane journal reads.
	if _, err := ReadJournal(journalOf(t, 40, measured(0, sane[0]), measured(1, sane[1]))); err != nil {
		t.Fatalf("a sane journal refused: %v", err)
	}

	// ttft_ns = -10^15 (TTFT p50 −499,999,989 ms before).
	bad := sane[1]
	bad.TTFTNS, bad.TokenTimesNS = -1e15, []int64{-1e15, 6e6, 7e6}
	p := journalOf(t, 40, measured(0, sane[0]), measured(1, bad))
	_, err := ReadJournal(p)
	wantInvalid(t, err, p, "line 3 (measure slot 1, id tp-1)", "ttft_ns")

	// 5,000 copies of one slot (counted as 5,000 requests before).
	var copies []JournalEntry
	for range 5000 {
		copies = append(copies, measured(0, sane[0]))
	}
	_, err = ReadJournal(journalOf(t, 40, copies...))
	wantInvalid(t, err, "line 3 (measure slot 0, id tp-0): slot: written before, on line 2")

	// 5,000 slots of a run of -n 40.
	var many []JournalEntry
	for i := range 5000 {
		q := sane[0]
		q.RequestID = fmt.Sprint("x-", i)
		many = append(many, measured(i, q))
	}
	_, err = ReadJournal(journalOf(t, 40, many...))
	wantInvalid(t, err, "line 42 (measure slot 40, id x-40)", "measured request 41 of a run configured for 40")
}
