package runfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// The journal is the run's record while it runs: `tokenpulse bench`
// creates the run directory and its journal (JournalFile, JSON lines)
// before the first request, appends one line per request as it finishes,
// and removes the journal once run.json is written. A run killed before
// it wrote run.json (kill -9, power loss, a crash) leaves its journal,
// from which ReadJournal rebuilds the run.
//
// The first line is a JournalHeader: what run.json would say of the run
// before any request (tool, start, command line, target, device, config,
// cold start) and what judging it needs. Each further line is a
// JournalEntry: one finished request, in the order the requests finished;
// or a JournalUpdate (a line with "update"): what became known of the run
// after the header was written (a browser run's page and renders once
// Chromium started, the CPU profile once written), a later update's
// fields replacing an earlier one's. Journals written before updates
// existed have none, and load as they did.
// Each line is written with one write(2) before the request's result is
// reported (the progress line, the next request of its worker); the
// header is fsync'd, the request lines are not (an fsync per request
// would be disk I/O on the measuring machine while other requests
// stream), so a process killed keeps every line it wrote, and a machine
// that loses power may lose the last ones. A line cut short (the process
// died in the middle of a write, a full disk) is ignored with a note.

// JournalFile is the journal's name in the run directory.
const JournalFile = "run.journal.jsonl"

// JournalVersion is the version of the journal format this package
// writes; ReadJournal refuses a newer one.
const JournalVersion = 1

// The phases of a journaled request, in the order of issue: the cold
// request, the warm-up requests, the measured ones, then a scenario's
// (rapid-fire: alone, interrupted, follow-up per pair).
const (
	PhaseCold     = "cold"
	PhaseWarmup   = "warmup"
	PhaseMeasure  = "measure"
	PhaseScenario = "scenario"
)

var phaseRank = map[string]int{PhaseCold: 0, PhaseWarmup: 1, PhaseMeasure: 2, PhaseScenario: 3}

// JournalHeader is the journal's first line.
type JournalHeader struct {
	// Journal is the format's version (JournalVersion); it tells a
	// journal from other JSON.
	Journal       int        `json:"journal"`
	SchemaVersion int        `json:"schema_version"`
	Tool          Tool       `json:"tool"`
	StartedAt     time.Time  `json:"started_at"`
	CommandLine   []string   `json:"command_line,omitempty"`
	Target        Target     `json:"target"`
	Device        Device     `json:"device"`
	Config        Config     `json:"config"`
	ColdStart     *ColdStart `json:"cold_start,omitempty"`
	// Config.SuiteThresholds holds every category's thresholds (run.json
	// keeps those of the categories measured; the rebuild does the same).
	//
	// TierThresholds are the expressions of the device tier the run is
	// judged against (Device.Tier), as the tiers in use define it, so
	// that a rebuilt run is judged as bench would have judged it.
	TierThresholds []string `json:"tier_thresholds,omitempty"`
	// ExperienceYAML is the experience mapping (bench --experience) when
	// it is not the shipped one.
	ExperienceYAML string `json:"experience_yaml,omitempty"`
	// Shard is the shard of a sharded run (before its measured requests
	// began: no MeasuredAt yet).
	Shard *Shard `json:"shard,omitempty"`
}

// JournalEntry is one finished request.
type JournalEntry struct {
	// Phase is one of the Phase constants; Slot is the request's place in
	// the order of issue within its phase (the measured requests finish
	// out of order when several are in flight).
	Phase string `json:"phase"`
	Slot  int    `json:"slot"`
	// At is the wall-clock instant the line was written.
	At      time.Time `json:"at"`
	Request Request   `json:"request"`
}

// JournalUpdate is what became known of the run after the journal's
// header: each field set replaces what an earlier update said of it.
type JournalUpdate struct {
	// Browser is run.json's config.browser (bench --browser), known once
	// Chromium started; the relay's holds are known at the workload's end.
	Browser *Browser `json:"browser,omitempty"`
	// Profile is run.json's profile, known once the profile is written
	// (a run killed while it sampled leaves none).
	Profile *Profile `json:"profile,omitempty"`
}

// empty reports whether u says nothing.
func (u JournalUpdate) empty() bool { return u.Browser == nil && u.Profile == nil }

// merge sets in u what later says.
func (u *JournalUpdate) merge(later JournalUpdate) {
	if later.Browser != nil {
		u.Browser = later.Browser
	}
	if later.Profile != nil {
		u.Profile = later.Profile
	}
}

// journalLine is any line after the header: an update when Update is
// set, else an entry.
type journalLine struct {
	JournalEntry
	Update *JournalUpdate `json:"update,omitempty"`
}

// maxUpdates bounds the update lines a journal may hold besides its
// requests (a run writes at most two).
const maxUpdates = 16

// JournalWriter appends to a journal. It is safe for concurrent use. The
// first write that fails stops it: Err returns that error, and later
// appends do nothing (the run goes on; run.json is written at its end
// as always).
type JournalWriter struct {
	mu   sync.Mutex
	f    *os.File
	path string
	err  error
}

// CreateJournal creates the journal at path (its directory must exist)
// and writes and syncs its header. It refuses to replace an existing
// journal: that is the only record of a run that never finished.
func CreateJournal(path string, h JournalHeader) (*JournalWriter, error) {
	h.Journal = JournalVersion
	if h.SchemaVersion == 0 {
		h.SchemaVersion = SchemaVersion
	}
	line, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s exists: it is the journal of a run that did not finish (tokenpulse report %s rebuilds that run); move it away or write elsewhere", path, filepath.Dir(path))
	}
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	syncDir(filepath.Dir(path))
	return &JournalWriter{f: f, path: path}, nil
}

// syncDir makes a new directory entry durable, where the system can.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// Path returns the journal's file.
func (w *JournalWriter) Path() string { return w.path }

// Append writes one finished request as one line, with one write.
func (w *JournalWriter) Append(phase string, slot int, r *Request) error {
	line, err := json.Marshal(JournalEntry{Phase: phase, Slot: slot, At: time.Now().UTC(), Request: *r})
	if err != nil {
		return err
	}
	return w.write(line)
}

// Update writes what became known of the run (see [JournalUpdate]) as one
// line; an empty update writes nothing.
func (w *JournalWriter) Update(u JournalUpdate) error {
	if u.empty() {
		return nil
	}
	line, err := json.Marshal(struct {
		At     time.Time     `json:"at"`
		Update JournalUpdate `json:"update"`
	}{time.Now().UTC(), u})
	if err != nil {
		return err
	}
	return w.write(line)
}

// write appends line and its newline with one write.
func (w *JournalWriter) write(line []byte) error {
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.f == nil {
		return errors.New("journal closed")
	}
	if _, err := w.f.Write(line); err != nil {
		w.err = fmt.Errorf("journal %s: %w", w.path, err)
		return w.err
	}
	return nil
}

// Err returns the error that stopped the journal, nil while it works.
func (w *JournalWriter) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close syncs and closes the journal (the file stays).
func (w *JournalWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	serr := w.f.Sync()
	cerr := w.f.Close()
	w.f = nil
	return errors.Join(serr, cerr)
}

// Journal is a journal as read back.
type Journal struct {
	Path    string
	Header  JournalHeader
	Entries []JournalEntry
	// Update is what the update lines said, merged in order.
	Update JournalUpdate
	// Notes say what was ignored: a line cut short by the death of the
	// process that wrote it, a line that does not decode.
	Notes []string
}

// ReadJournal reads the journal at path. A line that does not decode (the
// last one, cut short when the writer died; or any other) is left out and
// noted in Notes. A missing or unreadable header is an error, and so is
// a journal the run's rules refuse (see DecodeJournal): an *InvalidError
// naming the line.
func ReadJournal(path string) (*Journal, error) {
	b, err := readBounded(path)
	if err != nil {
		return nil, err
	}
	return DecodeJournal(path, b)
}

// DecodeJournal decodes a journal's bytes; path names it in notes and
// errors. Each entry must hold a valid request (Request.Validate) in a
// slot of its own (a phase and slot written twice is refused, not
// counted twice), and together they must pass the rules of a run that
// span its requests (ids unique, at most one cold request, no more
// measured draws than the header's config asked for, at most
// MaxRequests): the refusal is an *InvalidError naming the first
// offending line.
func DecodeJournal(path string, b []byte) (*Journal, error) {
	j := &Journal{Path: path}
	lines := bytes.Split(b, []byte("\n"))
	// The piece after the last newline is a line whose newline was never
	// written: empty when the file ends cleanly.
	complete := len(lines) - 1
	if len(lines[complete]) == 0 {
		lines = lines[:complete]
	}
	if len(lines) == 0 {
		return nil, fmt.Errorf("%s: empty journal: the run was killed before it wrote the journal's header", path)
	}
	if err := json.Unmarshal(lines[0], &j.Header); err != nil || j.Header.Journal == 0 {
		if err == nil {
			err = errors.New("no \"journal\" version")
		}
		return nil, fmt.Errorf("%s: not a tokenpulse journal (first line: %v)", path, err)
	}
	if j.Header.Journal > JournalVersion {
		return nil, fmt.Errorf("%s: journal version %d is newer than this tokenpulse reads (%d)", path, j.Header.Journal, JournalVersion)
	}
	if j.Header.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("%s: run file schema %d is newer than this tokenpulse reads (%d)", path, j.Header.SchemaVersion, SchemaVersion)
	}
	var lineOf []int
	if len(lines)-1 > MaxRequests+maxUpdates {
		return nil, &InvalidError{Path: path, Msg: tooMany(len(lines) - 1)}
	}
	updates := 0
	for i := 1; i < len(lines); i++ {
		var l journalLine
		err := json.Unmarshal(lines[i], &l)
		e := l.JournalEntry
		if err == nil && l.Update != nil {
			if e.Phase != "" {
				err = errors.New("an update that is also a request")
			} else if updates++; updates > maxUpdates {
				return nil, &InvalidError{Path: path, Where: fmt.Sprintf("line %d", i+1), Msg: fmt.Sprintf("more than %d update lines", maxUpdates)}
			} else {
				j.Update.merge(*l.Update)
				continue
			}
		}
		if err == nil {
			if _, ok := phaseRank[e.Phase]; !ok {
				err = fmt.Errorf("unknown phase %q", e.Phase)
			}
		}
		if err != nil {
			if i >= complete {
				j.Notes = append(j.Notes, fmt.Sprintf("%s: ignored its last line (%d bytes), cut short when the run died while writing it", path, len(lines[i])))
			} else {
				j.Notes = append(j.Notes, fmt.Sprintf("%s: ignored line %d, which does not decode: %v", path, i+1, err))
			}
			continue
		}
		j.Entries = append(j.Entries, e)
		lineOf = append(lineOf, i+1)
	}
	if err := j.validate(lineOf); err != nil {
		return nil, err
	}
	return j, nil
}

// validate checks the journal's entries; lineOf[k] is entry k's line.
func (j *Journal) validate(lineOf []int) error {
	if len(j.Entries) > MaxRequests {
		return &InvalidError{Path: j.Path, Msg: tooMany(len(j.Entries))}
	}
	where := func(k int) string {
		e := &j.Entries[k]
		s := fmt.Sprintf("line %d (%s slot %d", lineOf[k], e.Phase, e.Slot)
		if e.Request.RequestID != "" {
			s += ", id " + e.Request.RequestID
		}
		return s + ")"
	}
	type key struct {
		phase string
		slot  int
	}
	slots := make(map[key]int, len(j.Entries))
	reqs := make([]Request, len(j.Entries))
	for k := range j.Entries {
		e := &j.Entries[k]
		if e.Slot < 0 {
			return &InvalidError{Path: j.Path, Where: where(k), Field: "slot", Msg: fmt.Sprintf("%d is negative", e.Slot)}
		}
		if first, ok := slots[key{e.Phase, e.Slot}]; ok {
			return &InvalidError{Path: j.Path, Where: where(k), Field: "slot", Msg: fmt.Sprintf("written before, on line %d: each request is journaled once", lineOf[first])}
		}
		slots[key{e.Phase, e.Slot}] = k
		if err := e.Request.Validate(); err != nil {
			return place(err, j.Path, where(k))
		}
		reqs[k] = e.Request
		reqs[k].Cold = e.Phase == PhaseCold || reqs[k].Cold
		reqs[k].Warmup = e.Phase == PhaseWarmup || reqs[k].Warmup
		if e.Phase == PhaseScenario {
			reqs[k].Warmup = true // a scenario's requests are no draws of the sample
		}
	}
	if err := checkSet(reqs, j.Header.Config, where); err != nil {
		return place(err, j.Path, "")
	}
	return nil
}

// Run returns the run the journal records: the header's fields, the
// requests in the order they were issued (cold, warm-up, measured, then
// a scenario's; Index renumbered from 0), Interrupted set (whoever reads
// a journal reads a run that stopped before writing run.json), and
// FinishedAt the instant of the last request's line (StartedAt when
// none), and what the updates said (config.browser, profile). Summary,
// verdicts, experience and warnings are left to the caller: package
// measure summarizes, package gate judges. A scenario's own results
// (rapid-fire's abort latencies) are not journaled: Scenario is nil.
func (j *Journal) Run() *Run {
	h := j.Header
	run := &Run{
		SchemaVersion: SchemaVersion,
		Tool:          h.Tool,
		StartedAt:     h.StartedAt,
		FinishedAt:    h.StartedAt,
		CommandLine:   h.CommandLine,
		Interrupted:   true,
		Target:        h.Target,
		Device:        h.Device,
		Config:        h.Config,
		ColdStart:     h.ColdStart,
		Shard:         h.Shard,
		Requests:      []Request{},
		Profile:       j.Update.Profile,
	}
	if j.Update.Browser != nil {
		run.Config.Browser = j.Update.Browser
	}
	es := append([]JournalEntry(nil), j.Entries...)
	sort.SliceStable(es, func(a, b int) bool {
		if ra, rb := phaseRank[es[a].Phase], phaseRank[es[b].Phase]; ra != rb {
			return ra < rb
		}
		return es[a].Slot < es[b].Slot
	})
	for i, e := range es {
		r := e.Request
		r.Index = i
		run.Requests = append(run.Requests, r)
		if e.At.After(run.FinishedAt) {
			run.FinishedAt = e.At
		}
	}
	return run
}
