// Package trace reads production request traces, line by line, for
// bench --trace to replay: each entry says when a request arrived
// (relative to the trace's first), how many prompt tokens it had and how
// many it generated. Three formats are read:
//
//   - Mooncake JSONL: {"timestamp": ms, "input_length": N,
//     "output_length": M, "hash_ids": [...]}, one object a line; each hash
//     id names a block of [BlockTokens] prompt tokens, and requests that
//     share ids share that prefix.
//   - Azure's LLM inference trace, CSV with a header: TIMESTAMP (a date
//     and time), ContextTokens, GeneratedTokens.
//   - BurstGPT, CSV with a header: Timestamp (seconds), Request tokens,
//     Response tokens, Model, ...
//
// A trace is streamed: a [Reader] holds one line at a time, so a file of
// millions of lines costs no more memory than one of ten. Every entry is
// checked as it is read, and a bad one is refused with its file and line
// ([LineError]): a negative or unsorted timestamp, a missing field, a
// length of 0 or past the context.
package trace

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Format names a trace format (bench --trace-format).
type Format string

// The formats.
const (
	// Auto tells the format from the file's first line.
	Auto Format = "auto"
	// Mooncake is Mooncake's JSONL (AIPerf reads it).
	Mooncake Format = "mooncake"
	// Azure is Azure's LLM inference trace (CSV).
	Azure Format = "azure"
	// BurstGPT is BurstGPT's trace (CSV).
	BurstGPT Format = "burstgpt"
)

// ParseFormat reads a format's name ("" is [Auto]).
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case "", Auto:
		return Auto, nil
	case Mooncake, Azure, BurstGPT:
		return f, nil
	}
	return "", fmt.Errorf("unknown trace format %q (want auto, mooncake, azure or burstgpt)", s)
}

// BlockTokens is how many prompt tokens one Mooncake hash id names.
const BlockTokens = 512

// Entry is one request of a trace.
type Entry struct {
	// Line is the entry's line in the file, from 1.
	Line int
	// At is when the request arrived, from the trace's first request.
	At time.Duration
	// Input and Output are the prompt's and the answer's lengths in
	// tokens.
	Input, Output int
	// HashIDs (Mooncake) name the prompt's blocks of BlockTokens tokens,
	// in order; nil when the trace has none.
	HashIDs []int64
	// Model is the model the request asked for (BurstGPT), if said.
	Model string
}

// LineError is a trace refused at one of its lines.
type LineError struct {
	File string
	Line int
	Msg  string
}

// Error is "FILE:LINE: what is wrong".
func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Options are the checks a Reader makes beyond the format's own.
type Options struct {
	// Ctx, when > 0, is the target's context: an entry whose prompt and
	// answer together take more is refused.
	Ctx int
}

// Reader reads a trace's entries one at a time.
type Reader struct {
	// Format is the file's format (told from its first line with Auto).
	Format Format

	name  string
	file  *os.File
	opts  Options
	next  func() (Entry, error)
	first float64 // the first entry's timestamp, in the format's unit
	// firstTime is the first entry's time (Azure's dates).
	firstTime time.Time
	prev      time.Duration
	n         int
	skipped   int
}

// Skipped is how many rows Next has passed over: BurstGPT's failed
// requests (0 response tokens), which its log keeps beside the served
// ones.
func (r *Reader) Skipped() int { return r.skipped }

// Open opens the trace at path in format f (Auto: told from its first
// line). Close the reader when done.
func Open(path string, f Format, opts Options) (*Reader, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(file, path, f, opts)
	if err != nil {
		file.Close()
		return nil, err
	}
	r.file = file
	return r, nil
}

// The bounds a trace is held to, whatever the target: a line (a JSONL
// object or a CSV row) of at most MaxLineBytes, refused at its line
// before it is held whole, and a request of at most MaxTokens tokens in
// and out, so that a file with no --ctx to check it against cannot ask
// for a prompt of billions of tokens.
const (
	MaxLineBytes = 1 << 20
	MaxTokens    = 1 << 21
)

// lineBound passes src through, failing with a LineError once a line
// runs past MaxLineBytes.
type lineBound struct {
	src  io.Reader
	name string
	line int // lines ended so far
	run  int // bytes of the line in progress
}

func (l *lineBound) Read(p []byte) (int, error) {
	n, err := l.src.Read(p)
	for _, c := range p[:n] {
		if c == '\n' {
			l.line++
			l.run = 0
			continue
		}
		if l.run++; l.run > MaxLineBytes {
			return 0, &LineError{File: l.name, Line: l.line + 1, Msg: fmt.Sprintf("a line of more than %d bytes", MaxLineBytes)}
		}
	}
	return n, err
}

// NewReader reads a trace from src, named name in its errors.
func NewReader(src io.Reader, name string, f Format, opts Options) (*Reader, error) {
	br := bufio.NewReaderSize(&lineBound{src: src, name: name}, 1<<16)
	r := &Reader{name: name, opts: opts, first: math.NaN()}
	if f == "" || f == Auto {
		var err error
		if f, err = detect(br, name); err != nil {
			return nil, err
		}
	}
	r.Format = f
	switch f {
	case Mooncake:
		r.next = r.jsonl(br)
	case Azure, BurstGPT:
		next, err := r.csv(br, f)
		if err != nil {
			return nil, err
		}
		r.next = next
	default:
		return nil, fmt.Errorf("unknown trace format %q", f)
	}
	return r, nil
}

// Close closes the file Open opened.
func (r *Reader) Close() error {
	if r.file == nil {
		return nil
	}
	return r.file.Close()
}

// Next returns the next entry, io.EOF after the last; any other error is
// a [LineError] or one of reading.
func (r *Reader) Next() (Entry, error) {
	e, err := r.next()
	for err == nil && r.Format == BurstGPT && e.Output == 0 && e.Input > 0 && e.At >= r.prev {
		r.skipped++
		e, err = r.next()
	}
	if err != nil {
		if err == io.EOF && r.n == 0 {
			if r.skipped > 0 {
				return Entry{}, fmt.Errorf("%s: the trace holds no request (%d failed requests, 0 response tokens, skipped)", r.name, r.skipped)
			}
			return Entry{}, fmt.Errorf("%s: the trace holds no request", r.name)
		}
		return Entry{}, err
	}
	switch {
	case e.At < r.prev:
		return Entry{}, r.errf(e.Line, "timestamp %v before the previous line's: a trace must be sorted by time", r.prev-e.At)
	case e.Input <= 0:
		return Entry{}, r.errf(e.Line, "input length %d: want ≥ 1", e.Input)
	case e.Output <= 0:
		return Entry{}, r.errf(e.Line, "output length %d: want ≥ 1", e.Output)
	case e.Input+e.Output > MaxTokens:
		return Entry{}, r.errf(e.Line, "input %d + output %d tokens is past the most a request may ask (%d)", e.Input, e.Output, MaxTokens)
	case r.opts.Ctx > 0 && e.Input+e.Output > r.opts.Ctx:
		return Entry{}, r.errf(e.Line, "input %d + output %d tokens is past the context of %d (--ctx)", e.Input, e.Output, r.opts.Ctx)
	}
	r.prev = e.At
	r.n++
	return e, nil
}

func (r *Reader) errf(line int, format string, args ...any) error {
	return &LineError{File: r.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// offset turns a timestamp of unit seconds into the offset from the
// trace's first entry (whose own is 0). A first timestamp below 0 is
// refused by Next as a negative offset.
func (r *Reader) offset(line int, ts, unit float64) (time.Duration, error) {
	if math.IsNaN(ts) || math.IsInf(ts, 0) {
		return 0, r.errf(line, "timestamp %v is not a number", ts)
	}
	if ts < 0 {
		return 0, r.errf(line, "negative timestamp %v", ts)
	}
	if math.IsNaN(r.first) {
		r.first = ts
	}
	return time.Duration(math.Round((ts - r.first) * unit * 1e9)), nil
}

// detect tells the format from the first non-blank line, left unread
// (only its first 64 KiB are looked at).
func detect(br *bufio.Reader, name string) (Format, error) {
	head, err := br.Peek(1 << 16)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return "", err
	}
	line, _, _ := bytes.Cut(bytes.TrimLeft(head, " \t\r\n\ufeff"), []byte("\n"))
	lower := bytes.ToLower(line)
	switch {
	case len(line) == 0:
		return "", fmt.Errorf("%s: the trace holds no request", name)
	case line[0] == '{':
		return Mooncake, nil
	case bytes.Contains(lower, []byte("contexttokens")):
		return Azure, nil
	case bytes.Contains(lower, []byte("request tokens")):
		return BurstGPT, nil
	}
	return "", fmt.Errorf("%s: cannot tell the trace's format from its first line (a JSON object is Mooncake, a CSV header with ContextTokens Azure, with \"Request tokens\" BurstGPT): give --trace-format", name)
}

// mooncakeLine is one line of a Mooncake trace; pointers tell a field
// missing from one given as 0.
type mooncakeLine struct {
	Timestamp *float64 `json:"timestamp"`
	Input     *int     `json:"input_length"`
	Output    *int     `json:"output_length"`
	HashIDs   []int64  `json:"hash_ids"`
}

// jsonl reads Mooncake lines.
func (r *Reader) jsonl(br *bufio.Reader) func() (Entry, error) {
	line := 0
	return func() (Entry, error) {
		for {
			b, err := br.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				// A long line (many hash ids): gather it whole.
				buf := append([]byte(nil), b...)
				for errors.Is(err, bufio.ErrBufferFull) {
					b, err = br.ReadSlice('\n')
					buf = append(buf, b...)
				}
				b = buf
			}
			if err != nil && err != io.EOF {
				return Entry{}, err
			}
			if len(b) == 0 && err == io.EOF {
				return Entry{}, io.EOF
			}
			line++
			b = bytes.TrimSpace(b)
			if len(b) == 0 {
				if err == io.EOF {
					return Entry{}, io.EOF
				}
				continue
			}
			var m mooncakeLine
			if jerr := json.Unmarshal(b, &m); jerr != nil {
				return Entry{}, r.errf(line, "not a JSON object of a Mooncake trace: %v", jerr)
			}
			var missing []string
			if m.Timestamp == nil {
				missing = append(missing, "timestamp")
			}
			if m.Input == nil {
				missing = append(missing, "input_length")
			}
			if m.Output == nil {
				missing = append(missing, "output_length")
			}
			if len(missing) > 0 {
				return Entry{}, r.errf(line, "missing %s", strings.Join(missing, ", "))
			}
			at, oerr := r.offset(line, *m.Timestamp, 1e-3)
			if oerr != nil {
				return Entry{}, oerr
			}
			return Entry{Line: line, At: at, Input: *m.Input, Output: *m.Output, HashIDs: m.HashIDs}, nil
		}
	}
}

// columns are the CSV columns a format needs: timestamp, input, output,
// and optional model ("" for none).
var columns = map[Format][4]string{
	Azure:    {"timestamp", "contexttokens", "generatedtokens", ""},
	BurstGPT: {"timestamp", "request tokens", "response tokens", "model"},
}

// azureTime is the layout of Azure's TIMESTAMP ("2023-11-16
// 18:15:46.6805900").
const azureTime = "2006-01-02 15:04:05.999999999"

// csv reads the CSV formats.
func (r *Reader) csv(br *bufio.Reader, f Format) (func() (Entry, error), error) {
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("%s: the trace holds no request", r.name)
		}
		return nil, r.csvErr(err)
	}
	head = append([]string(nil), head...) // ReuseRecord reuses it
	want := columns[f]
	idx := [4]int{-1, -1, -1, -1}
	for i, h := range head {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		for k, w := range want {
			if w != "" && h == w && idx[k] < 0 {
				idx[k] = i
			}
		}
	}
	var missing []string
	for k := range 3 {
		if idx[k] < 0 {
			missing = append(missing, want[k])
		}
	}
	if len(missing) > 0 {
		return nil, r.errf(1, "the %s header lacks the column(s) %s", f, strings.Join(missing, ", "))
	}
	return func() (Entry, error) {
		rec, err := cr.Read()
		if err != nil {
			if err == io.EOF {
				return Entry{}, io.EOF
			}
			return Entry{}, r.csvErr(err)
		}
		line, _ := cr.FieldPos(0)
		field := func(k int) (string, error) {
			if idx[k] >= len(rec) || strings.TrimSpace(rec[idx[k]]) == "" {
				return "", r.errf(line, "missing %s", head[idx[k]])
			}
			return strings.TrimSpace(rec[idx[k]]), nil
		}
		e := Entry{Line: line}
		ts, err := field(0)
		if err != nil {
			return Entry{}, err
		}
		if f == Azure {
			t, perr := time.Parse(azureTime, ts)
			if perr != nil {
				return Entry{}, r.errf(line, "%s %q: want a date and time such as 2023-11-16 18:15:46.6805900", head[idx[0]], ts)
			}
			if r.firstTime.IsZero() {
				r.firstTime = t
			}
			e.At = t.Sub(r.firstTime)
		} else {
			sec, err := strconv.ParseFloat(ts, 64)
			if err != nil {
				return Entry{}, r.errf(line, "%s %q: want seconds", head[idx[0]], ts)
			}
			if e.At, err = r.offset(line, sec, 1); err != nil {
				return Entry{}, err
			}
		}
		for k, dst := range []*int{&e.Input, &e.Output} {
			s, err := field(k + 1)
			if err != nil {
				return Entry{}, err
			}
			if *dst, err = strconv.Atoi(s); err != nil {
				return Entry{}, r.errf(line, "%s %q: want a whole number of tokens", head[idx[k+1]], s)
			}
		}
		if idx[3] >= 0 && idx[3] < len(rec) {
			e.Model = rec[idx[3]]
		}
		return e, nil
	}, nil
}

// csvErr places a CSV syntax error on its line.
func (r *Reader) csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return r.errf(pe.Line, "%v", pe.Err)
	}
	return err
}
