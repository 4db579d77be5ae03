// Package runfile defines run.json, the one record of a tokenpulse run
// (schema 1 of DESIGN.md). Every report is rendered from a Run, so a run
// can be re-judged and re-rendered later. Which requests count in a scope
// and how the summary's figures are derived belong to package measure
// (measure.Summarize fills Summary).
//
// Times in Requests are nanosecond offsets from that request's start;
// Summary figures are milliseconds. Overall and Categories hold warm
// requests only, Cold the cold ones; warm-up requests appear in Requests
// and in no summary.
//
//	r, err := runfile.Load("out/run.json")
//	fmt.Println(r.Summary.Overall.TTFTMs.P95)
//
// A Run is plain data, not safe for concurrent mutation.
package runfile

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/stats"
)

// SchemaVersion is the version of the run file this package writes.
const SchemaVersion = 1

// Run is the whole run file.
type Run struct {
	SchemaVersion int       `json:"schema_version"`
	Tool          Tool      `json:"tool"`
	StartedAt     time.Time `json:"started_at"`
	FinishedAt    time.Time `json:"finished_at"`
	// CommandLine is the argv that reproduces the run.
	CommandLine []string `json:"command_line,omitempty"`
	// Interrupted is true when the run was stopped (Ctrl-C) before it
	// finished; what was measured is still here.
	Interrupted bool `json:"interrupted,omitempty"`
	// StopReason says why a run stopped before its end when it was not a
	// Ctrl-C: the target refused the credentials, or nothing listened
	// at its address (Interrupted is then true as well).
	StopReason string `json:"stop_reason,omitempty"`
	Target     Target `json:"target"`
	Device     Device `json:"device"`
	Config     Config `json:"config"`
	// ColdStart is the target's warm-up breakdown when it reports one
	// (tokenpulse serve's /health).
	ColdStart  *ColdStart   `json:"cold_start,omitempty"`
	Requests   []Request    `json:"requests"`
	Summary    Summary      `json:"summary"`
	Verdicts   []Verdict    `json:"verdicts"`
	Experience []Experience `json:"experience,omitempty"`
	// Scenario holds the results of a scenario run (rapid-fire).
	Scenario *Scenario `json:"scenario,omitempty"`
	// Warnings are notes the reports must show (e.g. batched tokens).
	Warnings []string `json:"warnings,omitempty"`
	// Comparison is the comparison with an earlier run (--against), or
	// why none was made; nil when none was asked.
	Comparison *Comparison `json:"comparison,omitempty"`
	// Profile names the CPU profile taken during the run, in the run
	// directory; nil when none was taken.
	Profile *Profile `json:"profile,omitempty"`
	// Machine is how late a sleeping goroutine woke on the measuring
	// machine while the run lasted: the runner's own noise, apart from
	// the target's (nil when not watched, as in runs before it existed).
	Machine *MachineNoise `json:"machine_noise,omitempty"`
	// Shard is this process's part of a sharded run (bench --shard);
	// nil for a whole run.
	Shard *Shard `json:"shard,omitempty"`
	// Merge says how a run was merged from its shards (tokenpulse
	// merge); nil otherwise. Partial is true when a shard is missing or
	// did not finish: the run is then smaller than the one configured.
	Merge   *Merge `json:"merge,omitempty"`
	Partial bool   `json:"partial,omitempty"`
	// Scrape is the target's own metrics sampled while the run lasted
	// (bench --scrape); nil when none was asked.
	Scrape *Scrape `json:"scrape,omitempty"`
}

// Profile is a CPU profile of the target taken during a run (pprof's
// profile.proto, gzipped: go tool pprof reads it).
type Profile struct {
	// File is its name in the run directory ("cpu.pprof").
	File string `json:"file"`
	// Source is "embedded" (this process, which also ran the measuring
	// client: the server's goroutines carry Label) or "remote" (the
	// target's /debug/pprof/profile: that process alone).
	Source string `json:"source"`
	// Label, "key=value", marks the server's samples in an embedded
	// profile; "" when every sample is the target's.
	Label string `json:"label,omitempty"`
	// DurationMS is how long it sampled.
	DurationMS float64 `json:"duration_ms"`
}

// Comparison records the comparison of a run with an earlier one (its
// base), as package compare made it, or why no comparison was made.
type Comparison struct {
	// Against is what was asked: "last" or a history id.
	Against string `json:"against"`
	// Base names the base ("history run 3 (2026-11-29T10:00:00Z)"); empty
	// when none was found or it was refused.
	Base string `json:"base,omitempty"`
	// BaseID is the base's history id, BaseStartedAt its start.
	BaseID        int64     `json:"base_id,omitempty"`
	BaseStartedAt time.Time `json:"base_started_at,omitzero"`
	// Skipped says why no comparison was made: no earlier run, or a base
	// refused because its settings differ (naming each difference).
	Skipped string `json:"skipped,omitempty"`
	// Tolerance (relative), FloorMS and Alpha are the options a change
	// was judged with.
	Tolerance float64 `json:"tolerance,omitempty"`
	FloorMS   float64 `json:"floor_ms,omitempty"`
	Alpha     float64 `json:"alpha,omitempty"`
	// Changes are every metric of every scope compared; Regressions
	// counts those with status "regressed".
	Changes     []Change `json:"changes,omitempty"`
	Regressions int      `json:"regressions"`
	// Notes say what could not be compared, or how the runs differ when
	// compared anyway (--against-any).
	Notes []string `json:"notes,omitempty"`
	// Evidence says what the verdict rests on: "noise band" (the
	// run-to-run spread of NoiseRuns earlier comparable runs),
	// "per-request test" (no noise estimate yet: fewer such runs than
	// asked for) or "repeats" (Welch's test on bench --repeat sets).
	Evidence string `json:"evidence,omitempty"`
	// NoiseRuns is the number of earlier runs the noise band was
	// estimated from (0 without one); NoiseWanted the number asked for.
	NoiseRuns   int `json:"noise_runs,omitempty"`
	NoiseWanted int `json:"noise_wanted,omitempty"`
	// Rule states the rule the changes were judged by, in words.
	Rule string `json:"rule,omitempty"`
}

// Change is one metric of one scope, base against new, as package
// compare judges it.
type Change struct {
	// Scope is "overall", "cold" or "category:NAME".
	Scope string `json:"scope"`
	// Metric is "ttft.p95", "gap.max", "errors.rate", ...
	Metric string `json:"metric"`
	// Unit is "ms" or "%".
	Unit string `json:"unit"`
	// Base and New are the scope's figure in each run, in Unit: the
	// figure the run's summary shows for the scope (measure.Aggregate;
	// gap figures pooled over every gap), errors.rate in percent.
	Base float64 `json:"base"`
	New  float64 `json:"new"`
	// Delta is New − Base; Relative is Delta ÷ Base (0 when Base is 0).
	Delta    float64 `json:"delta"`
	Relative float64 `json:"relative"`
	// P is the two-sided p-value of Test; 1 when untested.
	P float64 `json:"p"`
	// Test names the test and its sample: "mann-whitney, per-request
	// ttft", "... per-request gap p50" (each request's own gap p50), "...
	// per-request gap p95", "... per-request max gap", "... per-request
	// tpot", "... per-request e2e", or "fisher exact, error counts".
	Test string `json:"test"`
	// NBase and NNew are the sample sizes the test saw: the requests with
	// a value (one value each), or for errors.rate every request of the
	// scope.
	NBase int `json:"n_base"`
	NNew  int `json:"n_new"`
	// Status is the judgement: "regressed", "improved", "within
	// tolerance", "within noise", "not significant" or "too few samples".
	Status ChangeStatus `json:"status"`
	// Band is the figure's run-to-run noise band, estimated from earlier
	// comparable runs, when the verdict rests on one (nil otherwise).
	Band *Band `json:"band,omitempty"`
	// Tolerance is the practical tolerance the change was held to
	// (relative, 0.10 = 10 %), which depends on the kind of figure.
	Tolerance float64 `json:"tolerance,omitempty"`
}

// Band is the run-to-run spread of one figure over earlier comparable
// runs: a new figure inside [Lo, Hi] is what another run of an unchanged
// target gives (see package compare for how it is estimated).
type Band struct {
	// Runs is the number of earlier runs it was estimated from.
	Runs int `json:"runs"`
	// Centre is the figure's median over those runs; Scale its
	// run-to-run standard deviation.
	Centre float64 `json:"centre"`
	Scale  float64 `json:"scale"`
	// Width is the band's half-width in scales.
	Width float64 `json:"width"`
	// Lo and Hi bound the band: Centre ∓ Width × Scale.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Regressed reports whether the change is a regression.
func (c Change) Regressed() bool { return c.Status == ChangeRegressed }

// Regressed returns the comparison's changes that regressed, in order.
func (c *Comparison) Regressed() []Change {
	var out []Change
	for _, x := range c.Changes {
		if x.Regressed() {
			out = append(out, x)
		}
	}
	return out
}

// Tool names the program that wrote the run.
type Tool struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	GoVersion string `json:"go_version"`
}

// Target is what was measured.
type Target struct {
	URL string `json:"url"`
	// API is "chat" or "completions".
	API   string `json:"api"`
	Model string `json:"model"`
	// Backend is "embedded", "mock", "upstream", "gateway", or "" when
	// unknown.
	Backend string `json:"backend"`
	// The fields below are known for the embedded target.
	ModelFile     string `json:"model_file,omitempty"`
	ModelSHA256   string `json:"model_sha256,omitempty"`
	Quantization  string `json:"quantization,omitempty"`
	ContextLength int    `json:"context_length,omitempty"`
	Threads       int    `json:"threads,omitempty"`
	BatchSize     int    `json:"batch_size,omitempty"`
	// Kernels names the engine's integer dot products ("avx2", or
	// "avx512-vnni on Q8_0 rearranged at load; avx2").
	Kernels string `json:"kernels,omitempty"`
}

// Device is the machine the run was measured from (and, for the embedded
// target, ran on).
type Device struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel"`
	Arch        string `json:"arch"`
	CPUModel    string `json:"cpu_model"`
	CPUCores    int    `json:"cpu_cores"`
	MemoryBytes uint64 `json:"memory_bytes"`
	GoVersion   string `json:"go_version,omitempty"`
	// Tier is the device tier the run is judged against, if any.
	Tier string `json:"tier,omitempty"`
	// Label overrides the captured description ("Pixel 8 / Android 15").
	Label string `json:"label,omitempty"`
	// Android is what adb told of the Android device the run was made on
	// (bench --adb), with its heat; nil elsewhere.
	Android *Android `json:"android,omitempty"`
}

// Config is how the run was made.
type Config struct {
	Suite       string `json:"suite"`
	Seed        uint64 `json:"seed"`
	Requests    int    `json:"requests"`
	Concurrency int    `json:"concurrency"`
	// Rate is the open loop's target rate in requests per second.
	Rate float64 `json:"rate,omitempty"`
	// Arrival is "closed" (closed loop: Concurrency workers, each sending
	// its next request when its last one ends), or the open loop's
	// process with Rate: "poisson", "gamma" (shape Burstiness) or
	// "constant". In an open loop Concurrency is a ceiling on the
	// requests in flight.
	Arrival Arrival `json:"arrival"`
	// Burstiness is the gamma arrival's shape (1 is Poisson).
	Burstiness float64 `json:"burstiness,omitempty"`
	// DurationMS bounds an open loop's schedule (0: Requests arrivals);
	// RampMS is how long its rate took to rise linearly from 0 to Rate.
	DurationMS int64  `json:"duration_ms,omitempty"`
	RampMS     int64  `json:"ramp_ms,omitempty"`
	Warmup     int    `json:"warmup"`
	Cold       bool   `json:"cold"`
	MaxTokens  int    `json:"max_tokens,omitempty"`
	TimeoutMS  int64  `json:"timeout_ms,omitempty"`
	Scenario   string `json:"scenario,omitempty"`
	// Thresholds are the threshold expressions the run was judged with,
	// beyond those of the suite.
	Thresholds []string `json:"thresholds,omitempty"`
	// FrameHz and RenderBatchMS model the display for the visible metrics.
	FrameHz       float64 `json:"frame_hz,omitempty"`
	RenderBatchMS float64 `json:"render_batch_ms,omitempty"`
	// SuiteThresholds maps category name to its thresholds, copied from the
	// suite so the run can be re-judged without it.
	SuiteThresholds map[string][]string `json:"suite_thresholds,omitempty"`
	// Tokenizer is the vocabulary that counted each event's tokens
	// (bench --tokenizer: its file's base name), when one did.
	Tokenizer string `json:"tokenizer,omitempty"`
	// Request is what every request sent beyond its prompt and max_tokens
	// (bench --temperature, --top-p, --top-k, --sampling-seed, --stop,
	// --ignore-eos, --extra-body), exactly as sent; nil when nothing was,
	// and the server sampled with its own defaults.
	Request *api.RequestOptions `json:"request,omitempty"`
	// Browser is set for a browser run (bench --browser): the page,
	// render strategies, CPU throttling and the relay's added time.
	Browser *Browser `json:"browser,omitempty"`
	// ShowThinking maps a category to true when its app shows the
	// thinking of a reasoning model (the suite's show_thinking), so that
	// the visible metrics count thinking events; a category it does not
	// name shows only the answer.
	ShowThinking map[string]bool `json:"show_thinking,omitempty"`
	// Trace is the trace a replay (Arrival "trace") sent.
	Trace *TraceConfig `json:"trace,omitempty"`
}

// ColdStart is the target's cold-start breakdown, in milliseconds.
type ColdStart struct {
	LoadMS         float64 `json:"load_ms"`
	PageInMS       float64 `json:"page_in_ms"`
	KVInitMS       float64 `json:"kv_init_ms"`
	FirstForwardMS float64 `json:"first_forward_ms"`
	TotalMS        float64 `json:"total_ms"`
	// ProcessStartMS is from starting the server to its readiness, when
	// tokenpulse started it.
	ProcessStartMS float64 `json:"process_start_ms,omitempty"`
}

// Request is one request of the run. Times are ns from the request's start.
type Request struct {
	Index     int    `json:"index"`
	RequestID string `json:"request_id"`
	Category  string `json:"category"`
	PromptID  string `json:"prompt_id"`
	Cold      bool   `json:"cold"`
	Warmup    bool   `json:"warmup"`
	// Aborted marks a request the client aborted on purpose (the
	// rapid-fire scenario's interrupted answers); it is in no summary.
	Aborted bool `json:"aborted,omitempty"`
	// Status is the HTTP status (0 when no response came).
	Status int `json:"status"`
	// Error is empty on success; otherwise the reason, and ErrorKind one
	// of "http", "connect", "cut", "malformed", "timeout", "cancelled",
	// "overflow".
	Error     string    `json:"error,omitempty"`
	ErrorKind ErrorKind `json:"error_kind,omitempty"`
	// Retried is true when the request failed on a reused connection before
	// any response byte and was sent again on a fresh one; times are from
	// the retry's start.
	Retried bool `json:"retried,omitempty"`
	// StartedAt is the wall-clock instant of t_start.
	StartedAt time.Time `json:"started_at"`
	// ScheduledNS is, in an open loop, when the request was due: ns from
	// the schedule's origin (the start of the measured phase, after the
	// cold and warm-up requests); nil in a closed loop.
	ScheduledNS *int64 `json:"scheduled_ns,omitempty"`
	// ScheduleLagNS is, in an open loop, t_start less the scheduled
	// instant: how late the client sent the request. SlotWaitNS is the
	// part of it spent waiting for a free slot under the concurrency
	// ceiling. TTFT and E2E stay from t_start; their sums with the lag
	// are the latencies from the scheduled instant.
	ScheduleLagNS int64 `json:"schedule_lag_ns,omitempty"`
	SlotWaitNS    int64 `json:"slot_wait_ns,omitempty"`
	SentNS        int64 `json:"sent_ns"`
	HeadersNS     int64 `json:"headers_ns"`
	FirstByteNS   int64 `json:"first_byte_ns"`
	TTFTNS        int64 `json:"ttft_ns"`
	E2ENS         int64 `json:"e2e_ns"`
	// OutputTokens is from the server's usage when given, otherwise the
	// count of content tokens seen; TokenSource says which ("usage" or
	// "events").
	OutputTokens  int         `json:"output_tokens"`
	TokenSource   TokenSource `json:"token_source,omitempty"`
	PromptTokens  int         `json:"prompt_tokens,omitempty"`
	ContentEvents int         `json:"content_events"`
	// ReasoningEvents counts content events that were reasoning deltas.
	ReasoningEvents int `json:"reasoning_events,omitempty"`
	// ForeignEvents counts events whose id named another request; they are
	// dropped and never timed.
	ForeignEvents int    `json:"foreign_events,omitempty"`
	FinishReason  string `json:"finish_reason,omitempty"`
	// TokenTimesNS holds the arrival of each content event (ns from start).
	TokenTimesNS []int64 `json:"token_times_ns"`
	// TokenCounts holds, where an event carried more than one token, the
	// number of tokens of each event (parallel to TokenTimesNS); nil when
	// every event carried one.
	TokenCounts []int `json:"token_counts,omitempty"`
	// ServerTimesNS holds the server's emit time of each event as Unix ns,
	// when the server sends it (tokenpulse serve and mock do).
	ServerTimesNS []int64 `json:"server_times_ns,omitempty"`
	// Server is the server's own split of the request, when sent.
	Server *ServerTimings `json:"server,omitempty"`
	// Paint is what the page measured of the request in a browser run
	// (bench --browser): insertion and paint per token; nil otherwise.
	Paint *Paint `json:"paint,omitempty"`
	// ConversationID names the conversation the request is a turn of
	// (the request id of its first turn), Turn its place in it from 1,
	// and ThinkNS the think time waited after the previous turn's answer
	// ended before it was sent; all absent for a single prompt.
	ConversationID string `json:"conversation_id,omitempty"`
	Turn           int    `json:"turn,omitempty"`
	ThinkNS        int64  `json:"think_ns,omitempty"`
	// PromptTokenSource is "tokenizer" when PromptTokens was counted by
	// bench --tokenizer (the server sent no usage.prompt_tokens); absent
	// when the server counted them.
	PromptTokenSource TokenSource `json:"prompt_token_source,omitempty"`
	// ReasoningRuns are the runs of thinking events, each the half-open
	// range [from, to) of indexes into TokenTimesNS of consecutive content
	// events that carried a reasoning delta and no answer text, in order.
	// The other content events are the answer's. Absent when no event was
	// thinking only; a run file written before it was recorded has none,
	// and where its reasoning_events is above 0 the split is unknown.
	ReasoningRuns [][2]int `json:"reasoning_runs,omitempty"`
	// MaxTokens is the answer's length asked, in a trace replay: the
	// recorded output length (see TraceMatch).
	MaxTokens int `json:"max_tokens,omitempty"`
}

// ExtendRuns adds content event i, a thinking event, to runs (see
// [Request.ReasoningRuns]): to the last run when that ends at i, else as
// a run of its own. Events must come in order.
func ExtendRuns(runs [][2]int, i int) [][2]int {
	if n := len(runs); n > 0 && runs[n-1][1] == i {
		runs[n-1][1] = i + 1
		return runs
	}
	return append(runs, [2]int{i, i + 1})
}

// ServerTimings is the server's split of a request, in ns.
//
// Source says whose account it is, and so what the figures cover:
//
//   - "tokenpulse": tokenpulse serve's own (tokenpulse.timings). QueueNS is
//     from receiving the request to a generation slot; PrefillNS and
//     DecodeNS split the generation as the backend does (the embedded
//     engine: the prompt's forward passes, then everything from sampling
//     the first token to the end; the mock: up to the first token, then
//     from it to the last); DecodeTokens is every output token.
//   - "llama.cpp": llama-server's final-chunk "timings" (ms, converted).
//     QueueNS is 0 (not reported); PrefillNS is prompt_ms, which runs to
//     the sampling of the first output token, so the first token's time
//     is in it; DecodeNS is predicted_ms, from the first token to the end
//     of generation: the decoding of DecodeTokens − 1 tokens, though
//     DecodeTokens (predicted_n) counts the first too; PromptTokens
//     (prompt_n) leaves out prompt tokens reused from the server's cache.
type ServerTimings struct {
	QueueNS   int64 `json:"queue_ns"`
	PrefillNS int64 `json:"prefill_ns"`
	DecodeNS  int64 `json:"decode_ns"`
	// PromptTokens is the prompt tokens the prefill processed.
	PromptTokens int `json:"prompt_tokens,omitempty"`
	// CachedTokens is the prompt tokens the server reused from its prompt
	// cache rather than processed (tokenpulse's timings.cached_tokens; 0
	// from llama.cpp, whose prompt_n already leaves them out).
	CachedTokens int `json:"cached_tokens,omitempty"`
	// DecodeTokens is the output tokens of the decode phase, as the
	// server counts them (see Source for what DecodeNS covers).
	DecodeTokens int `json:"decode_tokens,omitempty"`
	// Source is "tokenpulse" or "llama.cpp" ("" in run files written
	// before it was recorded: tokenpulse's).
	Source string `json:"source,omitempty"`
}

// OK reports whether the request succeeded.
func (r *Request) OK() bool { return r.Error == "" }

// Summary holds the aggregates.
type Summary struct {
	Overall    Group            `json:"overall"`
	Cold       *Group           `json:"cold,omitempty"`
	Categories map[string]Group `json:"categories"`
	// Goodput is the share and rate of the warm requests that met every
	// per-request objective of their category (measure.Goodput); absent
	// in a run judged before goodput existed.
	Goodput *Goodput `json:"goodput,omitempty"`
	// Renders holds, for a browser run of several render strategies, the
	// overall scope of each strategy's requests.
	Renders map[string]Group `json:"renders,omitempty"`
	// Turns holds, for a run with conversations, the warm requests of each
	// turn number, in turn order: how TTFT grows with the conversation.
	Turns []TurnGroup `json:"turns,omitempty"`
	// Trace is how closely a replay kept its trace (Arrival "trace").
	Trace *TraceMatch `json:"trace,omitempty"`
}

// Goodput is how many of a scope's requests met every per-request
// objective that binds them (DESIGN.md, "Goodput").
type Goodput struct {
	// Objectives are the thresholds read as per-request objectives.
	Objectives []string `json:"objectives"`
	// Requests are the scope's counted requests, failed ones included;
	// Good those that met every objective binding them.
	Requests int `json:"requests"`
	Good     int `json:"good"`
	// Share is Good ÷ Requests; PerS is Good per second of the scope's
	// span.
	Share float64 `json:"share"`
	PerS  float64 `json:"per_s"`
}

// Group is the aggregate of a set of requests. Distributions are in ms.
type Group struct {
	Requests int `json:"requests"`
	Errors   int `json:"errors"`
	// ErrorKinds counts errors by kind.
	ErrorKinds map[string]int `json:"error_kinds,omitempty"`
	// TTFTMs, TPOTMs and E2EMs have one value per successful request;
	// GapMs pools every gap between content events (per event) of every
	// successful request, so its max is the worst stall; TokenIntervalMs
	// pools the per-token intervals (each gap ÷ the tokens of the event
	// that ended it), the same as GapMs where every event carries one
	// token. Package measure defines each.
	TTFTMs stats.Distribution `json:"ttft_ms"`
	TPOTMs stats.Distribution `json:"tpot_ms"`
	GapMs  stats.Distribution `json:"gap_ms"`
	// TokenIntervalMs are the per-token intervals: tpot.pNN and tpot.std.
	TokenIntervalMs stats.Distribution `json:"token_interval_ms"`
	// TTFTNetworkMs is, per request whose server gave its own split, TTFT
	// less the server's queue and prefill: the network's and the
	// client's share. ServerTPOTMs is the server's own decode time per
	// token. Both have count 0 when no server said.
	TTFTNetworkMs stats.Distribution `json:"ttft_network_ms,omitzero"`
	ServerTPOTMs  stats.Distribution `json:"server_tpot_ms,omitzero"`
	E2EMs         stats.Distribution `json:"e2e_ms"`
	// TPOTStdMs has one value per request: the std of that request's gaps.
	TPOTStdMs stats.Distribution `json:"tpot_std_ms"`
	// VisibleTTFTMs and VisibleGapMs are what a reader sees on the
	// configured display (frames with new text).
	VisibleTTFTMs stats.Distribution `json:"visible_ttft_ms"`
	VisibleGapMs  stats.Distribution `json:"visible_gap_ms"`
	// OutputTokens is the total of output tokens; TokensPerEvent is output
	// tokens ÷ content events (> 1: the endpoint batches, gaps are per
	// event).
	OutputTokens   int     `json:"output_tokens"`
	TokensPerEvent float64 `json:"tokens_per_event"`
	// Counting is the least exact way any successful request's tokens
	// were counted: "per-event" (each event's count known), "total" (the
	// server's usage only) or "events" (no count: one token per event
	// assumed, so per-token figures are per event).
	Counting string `json:"token_counting,omitempty"`
	// ScheduleLagMs has, in an open loop, one value per request (failed
	// ones too): t_start less its scheduled send time. ScheduledTTFTMs
	// and ScheduledE2EMs are TTFT and E2E from the scheduled send time
	// (lag included), one value per successful request. SlotWaits counts
	// the requests that found the concurrency ceiling reached and waited
	// for a slot. All are absent in a closed loop.
	ScheduleLagMs   stats.Distribution `json:"schedule_lag_ms,omitzero"`
	ScheduledTTFTMs stats.Distribution `json:"scheduled_ttft_ms,omitzero"`
	ScheduledE2EMs  stats.Distribution `json:"scheduled_e2e_ms,omitzero"`
	SlotWaits       int                `json:"slot_waits,omitempty"`
	// SpanS is the scope's span in seconds, from its first request's
	// start to its last one's end; RequestsPerS and OutputTokensPerS are
	// its successful requests and their output tokens per second of it.
	SpanS            float64 `json:"span_s,omitempty"`
	RequestsPerS     float64 `json:"requests_per_s,omitempty"`
	OutputTokensPerS float64 `json:"output_tokens_per_s,omitempty"`
	// PaintedTTFTMs, PaintGapMs, RenderOverheadMs and LongFrameMs are the
	// measured visible metrics of a browser run (package measure defines
	// them); count 0 otherwise.
	PaintedTTFTMs    stats.Distribution `json:"painted_ttft_ms,omitzero"`
	PaintGapMs       stats.Distribution `json:"paint_gap_ms,omitzero"`
	RenderOverheadMs stats.Distribution `json:"render_overhead_ms,omitzero"`
	LongFrameMs      stats.Distribution `json:"long_frame_ms,omitzero"`

	// PromptTokens has one value per successful request whose prompt
	// tokens the server counted (usage.prompt_tokens); InputTokens is
	// their sum, and InputTokensPerS that sum per second of the span,
	// given only when every successful request had a count.
	PromptTokens    stats.Distribution `json:"prompt_tokens,omitzero"`
	InputTokens     int                `json:"input_tokens,omitempty"`
	InputTokensPerS float64            `json:"input_tokens_per_s,omitempty"`
	// ConcurrencyMean is the achieved concurrency: the requests in flight
	// averaged over the span (the sum of the requests' durations ÷ the
	// span); ConcurrencyMax the most in flight at once.
	ConcurrencyMean float64 `json:"concurrency_mean,omitempty"`
	ConcurrencyMax  int     `json:"concurrency_max,omitempty"`

	// The two phases of a reasoning model's answers (package measure
	// defines each): the first thinking and the first answer event's
	// arrival, each phase's span and TPOT one value per request that had
	// the phase, and its per-token intervals pooled. All have count 0
	// when no request of the group thought (the answer is then the whole
	// stream: ttft, tpot) and in a run file written before they were
	// recorded.
	ReasoningTTFTMs          stats.Distribution `json:"reasoning_ttft_ms,omitzero"`
	AnswerTTFTMs             stats.Distribution `json:"answer_ttft_ms,omitzero"`
	ReasoningSpanMs          stats.Distribution `json:"reasoning_span_ms,omitzero"`
	AnswerSpanMs             stats.Distribution `json:"answer_span_ms,omitzero"`
	ReasoningTPOTMs          stats.Distribution `json:"reasoning_tpot_ms,omitzero"`
	AnswerTPOTMs             stats.Distribution `json:"answer_tpot_ms,omitzero"`
	ReasoningTokenIntervalMs stats.Distribution `json:"reasoning_token_interval_ms,omitzero"`
	AnswerTokenIntervalMs    stats.Distribution `json:"answer_token_interval_ms,omitzero"`
}

// TurnGroup is the aggregate of the warm requests that were turn Turn
// (from 1) of their conversation.
type TurnGroup struct {
	Turn int `json:"turn"`
	Group
}

// ErrorRate returns errors ÷ requests of g, 0 when it has no requests.
func (g Group) ErrorRate() float64 {
	if g.Requests == 0 {
		return 0
	}
	return float64(g.Errors) / float64(g.Requests)
}

// Verdict is the outcome of one threshold on one scope.
//
// Its fields say what was judged: Metric and Statistic on Scope, Operator
// and Limit, the Value found and whether it Passed. Rule is the
// threshold's text, for display only; no reader parses it (a run file
// written before the fields existed has them derived from it once, when
// it is loaded).
type Verdict struct {
	// Rule is the threshold expression as written ("gap.max <= 120ms"),
	// for display.
	Rule string `json:"rule"`
	// Scope is "overall", "cold", "category:NAME" or "turn:N"
	// (measure.ParseScope reads it).
	Scope string `json:"scope"`
	// Source says where the rule came from: "suite", "tier:NAME", "flag".
	Source string `json:"source,omitempty"`
	// Metric and Statistic are what the rule measures ("gap", "max"),
	// by their canonical names (gate.Parse).
	Metric    string `json:"metric,omitempty"`
	Statistic string `json:"statistic,omitempty"`
	// Operator is the comparison: "<", "<=", ">" or ">=".
	Operator string  `json:"operator,omitempty"`
	Value    float64 `json:"value"`
	Limit    float64 `json:"limit"`
	// Unit is the unit of Value and Limit ("ms", "%", "").
	Unit string `json:"unit,omitempty"`
	// Passed is true when the rule holds. It is written as null when the
	// rule was not judged (NoData says why), and then means nothing.
	Passed bool `json:"passed"`
	// NoData, when set, says why the rule was not judged: its scope had
	// nothing to measure (no successful request, no request sampled). A
	// verdict with no data neither passes nor fails, and Value is 0.
	NoData    string     `json:"no_data,omitempty"`
	Offenders []Offender `json:"offenders,omitempty"`
}

// Judged reports whether the rule was judged (its scope had data).
func (v Verdict) Judged() bool { return v.NoData == "" }

// Failed reports whether the rule was judged and does not hold.
func (v Verdict) Failed() bool { return v.NoData == "" && !v.Passed }

// Upper reports whether the limit is an upper bound (< or <=), so that
// larger values are worse.
func (v Verdict) Upper() bool { return v.Operator == "<" || v.Operator == "<=" }

// fromRule fills Metric, Statistic and Operator from the rule's text
// where they are missing: a run file of schema 1 written before verdicts
// had them holds only "METRIC.STAT OP LIMIT" (gate's canonical text).
// It is called once, when a run file is read.
func (v *Verdict) fromRule() {
	if v.Metric != "" {
		return
	}
	f := strings.Fields(v.Rule)
	if len(f) < 2 {
		return
	}
	metric, stat, ok := strings.Cut(f[0], ".")
	if !ok {
		return
	}
	switch f[1] {
	case "<", "<=", ">", ">=":
		v.Metric, v.Statistic, v.Operator = metric, stat, f[1]
	}
}

// MarshalJSON writes the verdict with "passed": null when it was not
// judged, so that no reader takes "no data" for a pass or a fail.
func (v Verdict) MarshalJSON() ([]byte, error) {
	type plain Verdict
	out := struct {
		plain
		Passed *bool `json:"passed"`
	}{plain: plain(v)}
	if v.NoData == "" {
		out.Passed = &v.Passed
	}
	return json.Marshal(out)
}

// Offender is a request that broke a threshold.
type Offender struct {
	Index     int     `json:"index"`
	RequestID string  `json:"request_id"`
	PromptID  string  `json:"prompt_id"`
	Category  string  `json:"category"`
	Value     float64 `json:"value"`
}

// Experience is one triggered row of the experience mapping.
type Experience struct {
	Rule       string  `json:"rule"`
	Scope      string  `json:"scope"`
	Tier       string  `json:"tier,omitempty"`
	Value      float64 `json:"value"`
	Unit       string  `json:"unit,omitempty"`
	Experience string  `json:"experience"`
	Impact     string  `json:"impact"`
}

// Scenario holds the per-follow-up results of a scenario such as
// rapid-fire.
type Scenario struct {
	Name      string     `json:"name"`
	FollowUps []FollowUp `json:"follow_ups"`
}

// FollowUp is one interruption of the rapid-fire scenario.
type FollowUp struct {
	// Interrupted and FollowUp are indexes into Requests.
	Interrupted int `json:"interrupted"`
	FollowUp    int `json:"follow_up"`
	// AbortLatencyNS: abort sent → last token of the old answer seen (0
	// when no token arrived after the abort was sent).
	AbortLatencyNS int64 `json:"abort_latency_ns"`
	// StopLatencyNS: abort sent → the old answer's stream ended (its last
	// event, such as finish_reason "abort" or [DONE], or the close).
	StopLatencyNS int64 `json:"stop_latency_ns"`
	// TokensAfterAbort as the server reported it (-1 when unknown).
	TokensAfterAbort int `json:"tokens_after_abort"`
	// AbortError is why the abort got no answer, when it got none (a
	// target without /v1/abort, or an answer that had already ended).
	AbortError string `json:"abort_error,omitempty"`
	// ForeignEvents seen on the follow-up's stream (must be 0).
	ForeignEvents int `json:"foreign_events"`
	// TTFTNS of the follow-up, and AloneTTFTNS of the same prompt asked
	// alone.
	TTFTNS      int64 `json:"ttft_ns"`
	AloneTTFTNS int64 `json:"alone_ttft_ns"`
	// OldPaintsAfterClick is, in a browser run, how many tokens of the
	// interrupted answer were painted after the follow-up's click (must
	// be 0); nil outside a browser run.
	OldPaintsAfterClick *int `json:"old_paints_after_click,omitempty"`
}

// Load reads and validates a run file: one larger than MaxFileBytes is
// refused before it is read, it is decoded as it is read (the requests
// one at a time, refused past MaxRequests), and the run must pass
// Run.Validate. A refusal is an *InvalidError naming path.
func Load(path string) (*Run, error) {
	f, err := openBounded(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := decode(f)
	if err != nil {
		var ie *InvalidError
		if errors.As(err, &ie) {
			ie.Path = path
			return nil, ie
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// openBounded opens the file at path, refusing one larger than
// MaxFileBytes.
func openBounded(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.Size() > MaxFileBytes {
		f.Close()
		return nil, &InvalidError{Path: path, Msg: fmt.Sprintf("%d bytes: tokenpulse reads run files and journals of at most %d MiB (runfile.MaxFileBytes)", fi.Size(), MaxFileBytes>>20)}
	}
	return f, nil
}

// readBounded reads the file at path, refusing one larger than
// MaxFileBytes.
func readBounded(path string) ([]byte, error) {
	f, err := openBounded(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err == nil && len(b) > MaxFileBytes {
		err = &InvalidError{Path: path, Msg: fmt.Sprintf("grew past %d MiB while read (runfile.MaxFileBytes)", MaxFileBytes>>20)}
	}
	return b, err
}

// Decode parses a run file from b and validates it (see Load).
func Decode(b []byte) (*Run, error) { return decode(bytes.NewReader(b)) }

// decode reads a run file from rd as it comes: the requests one at a
// time, refused past MaxRequests before they are decoded, the other
// fields (small) as one object. The run must pass Run.Validate.
func decode(rd io.Reader) (*Run, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(rd, 1<<16))
	notRun := func(err error) error { return fmt.Errorf("not a run file: %w", err) }
	if tok, err := dec.Token(); err != nil {
		return nil, notRun(err)
	} else if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, notRun(fmt.Errorf("want a JSON object, got %v", tok))
	}
	var r Run
	rest := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, notRun(err)
		}
		key, _ := tok.(string)
		// encoding/json matches keys without regard to case: so does
		// the one key read here.
		if strings.EqualFold(key, "requests") {
			if r.Requests, err = decodeRequests(dec); err != nil {
				return nil, err
			}
			continue
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, notRun(err)
		}
		rest[key] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, notRun(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, notRun(errors.New("data after the run's object"))
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return nil, notRun(err)
	}
	reqs := r.Requests
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, notRun(err)
	}
	r.Requests = reqs
	for i := range r.Verdicts {
		r.Verdicts[i].fromRule()
	}
	if r.SchemaVersion == 0 {
		return nil, errors.New("not a run file: no schema_version")
	}
	if r.SchemaVersion > SchemaVersion {
		return nil, fmt.Errorf("run file schema %d is newer than this tokenpulse reads (%d)", r.SchemaVersion, SchemaVersion)
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// decodeRequests reads the requests array from dec, one request at a
// time, refusing the (MaxRequests+1)th before decoding it.
func decodeRequests(dec *json.Decoder) ([]Request, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not a run file: requests: %w", err)
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("not a run file: requests: want an array, got %v", tok)
	}
	out := []Request{}
	for dec.More() {
		if len(out) == MaxRequests {
			return nil, &InvalidError{Msg: tooMany(len(out) + 1)}
		}
		var q Request
		if err := dec.Decode(&q); err != nil {
			return nil, fmt.Errorf("not a run file: request %d: %w", len(out), err)
		}
		out = append(out, q)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not a run file: requests: %w", err)
	}
	return out, nil
}

// Write writes the run file to path atomically (see WriteJSON).
func (r *Run) Write(path string) error { return WriteJSON(path, r) }

// ReadJSON reads the JSON file at path into v; when path is a directory,
// the file called name inside it (a run directory's sweep.json or
// repeats.json). It returns the file's path, which a decoding error
// names too. A file larger than MaxFileBytes is refused unread.
func ReadJSON(path, name string, v any) (string, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, name)
	}
	b, err := readBounded(path)
	if err != nil {
		return path, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return path, fmt.Errorf("%s: %w", path, err)
	}
	return path, nil
}

// WriteJSON writes v as indented JSON to path atomically (a temporary file
// in path's directory, made if missing, renamed into place), so a crash
// never leaves half a file: the run file and every file written beside it
// (sweep.json, repeats.json, ab.json).
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tokenpulse-*.json")
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	cerr := f.Close()
	if werr == nil && cerr == nil {
		werr = os.Chmod(f.Name(), 0o644) // CreateTemp makes it 0600
	}
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		return errors.Join(werr, cerr)
	}
	return os.Rename(f.Name(), path)
}

// MachineNoise is how late a goroutine sleeping PeriodMs at a time woke
// during a run, in milliseconds past the period: the scheduling delay of
// the measuring machine, which other work on it raises.
type MachineNoise struct {
	PeriodMs      float64 `json:"period_ms"`
	Samples       int     `json:"samples"`
	WakeLateP50Ms float64 `json:"wake_late_p50_ms"`
	WakeLateP99Ms float64 `json:"wake_late_p99_ms"`
	WakeLateMaxMs float64 `json:"wake_late_max_ms"`
}
