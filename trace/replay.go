package trace

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tokenpulse/tokenpulse/suite"
)

// Category is the category of a replay's requests in the run file.
const Category = "trace"

// Slice is the part of a trace a replay sends, and how fast.
type Slice struct {
	// From and To bound the entries sent, in the trace's own time: From
	// ≤ At < To (To 0: to the end). Times are then counted from From.
	From, To time.Duration
	// Speed divides the recorded times (2: twice as fast; > 0).
	Speed float64
}

// Validate reports what makes s unusable.
func (s Slice) Validate() error {
	switch {
	case !(s.Speed > 0) || math.IsInf(s.Speed, 0):
		return fmt.Errorf("the trace speed must be a finite number > 0, not %v", s.Speed)
	case s.From < 0 || s.To < 0:
		return errors.New("the trace window must not be negative")
	case s.To != 0 && s.To <= s.From:
		return fmt.Errorf("the trace window %v,%v is empty: want FROM < TO", s.From, s.To)
	}
	return nil
}

// in reports whether e is in the slice.
func (s Slice) in(e Entry) bool { return e.At >= s.From && (s.To == 0 || e.At < s.To) }

// due is e's offset from the replay's origin.
func (s Slice) due(e Entry) time.Duration {
	return time.Duration(math.Round(float64(e.At-s.From) / s.Speed))
}

// Replay is a slice of a trace file as bench sends it (it is a
// bench.Replay): [Scan] reads the whole file once, checking every line
// and counting the slice's entries, and [Replay.Arrivals] reads it again
// as the requests come due, writing each prompt just before it is sent.
// Neither holds more than one entry at a time.
type Replay struct {
	path   string
	format Format
	opts   Options
	slice  Slice
	p      *Prompter
	n      int
	// head are the slice's first entries, for the cold and warm-up
	// requests.
	head []Entry
	// skipped counts the rows passed over (Skipped).
	skipped int
}

// headEntries is how many of the slice's first entries Scan keeps.
const headEntries = 16

// Scan reads the trace at path (format f, Auto told from its first
// line) whole, refusing it at its first bad line, and returns the
// replay of slice s with prompts written by p.
func Scan(path string, f Format, opts Options, s Slice, p *Prompter) (*Replay, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r, err := Open(path, f, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rp := &Replay{path: path, format: r.Format, opts: opts, slice: s, p: p}
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if s.in(e) {
			rp.n++
			if len(rp.head) < headEntries {
				rp.head = append(rp.head, e)
			}
		}
	}
	if rp.n == 0 {
		return nil, fmt.Errorf("%s: no request in the window %v,%v", path, s.From, s.To)
	}
	rp.skipped = r.Skipped()
	return rp, nil
}

// Skipped is how many rows of the whole file the reader passed over
// (BurstGPT's failed requests; Reader.Skipped).
func (rp *Replay) Skipped() int { return rp.skipped }

// WithSpeed returns the replay of the same slice at another speed (> 0).
func (rp *Replay) WithSpeed(speed float64) *Replay {
	c := *rp
	c.slice.Speed = speed
	return &c
}

// Format is the trace's format.
func (rp *Replay) Format() Format { return rp.format }

// Len is the number of requests of the slice.
func (rp *Replay) Len() int { return rp.n }

// Prompt returns the request e makes.
func (rp *Replay) Prompt(e Entry) (suite.Prompt, error) {
	text, err := rp.p.Prompt(e)
	if err != nil {
		return suite.Prompt{}, fmt.Errorf("%s:%w", rp.path, err)
	}
	return suite.Prompt{ID: fmt.Sprintf("line %d", e.Line), Text: text, MaxTokens: e.Output, Category: Category}, nil
}

// Head returns the requests of the slice's first entries (at most 16):
// the cold and warm-up prompts of a replay.
func (rp *Replay) Head() ([]suite.Prompt, error) {
	out := make([]suite.Prompt, 0, len(rp.head))
	for _, e := range rp.head {
		p, err := rp.Prompt(e)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// prefetch is how many requests Arrivals writes ahead of the one due:
// a prompt of 16k tokens takes tens of milliseconds to write and check,
// which would otherwise delay a burst of arrivals (and show as schedule
// lag); memory stays bounded by that many prompts.
const prefetch = 64

// Arrivals reads the trace again and yields each entry of the slice:
// when it is due from the replay's origin and the request it makes. The
// prompts are written by a goroutine of their own, at most [prefetch]
// ahead of the request due, so that writing them delays no arrival.
func (rp *Replay) Arrivals(yield func(at time.Duration, p suite.Prompt) bool) error {
	type arrival struct {
		at  time.Duration
		p   suite.Prompt
		err error
	}
	ch := make(chan arrival, prefetch)
	stop := make(chan struct{})
	go func() {
		defer close(ch)
		err := rp.read(func(at time.Duration, p suite.Prompt) bool {
			select {
			case ch <- arrival{at: at, p: p}:
				return true
			case <-stop:
				return false
			}
		})
		if err != nil {
			select {
			case ch <- arrival{err: err}:
			case <-stop:
			}
		}
	}()
	defer func() {
		close(stop)
		for range ch { // until the reader has closed the file
		}
	}()
	for a := range ch {
		if a.err != nil {
			return a.err
		}
		if !yield(a.at, a.p) {
			return nil
		}
	}
	return nil
}

// read reads the trace and yields each entry of the slice with its
// prompt, until yield returns false.
func (rp *Replay) read(yield func(at time.Duration, p suite.Prompt) bool) error {
	r, err := Open(rp.path, rp.format, rp.opts)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		e, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !rp.slice.in(e) {
			if rp.slice.To != 0 && e.At >= rp.slice.To {
				return nil
			}
			continue
		}
		p, err := rp.Prompt(e)
		if err != nil {
			return err
		}
		if !yield(rp.slice.due(e), p) {
			return nil
		}
	}
}
