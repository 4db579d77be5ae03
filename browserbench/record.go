package browserbench

import (
	"math"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stream"
)

// record is what the page keeps of one answer (app.js newRecord). Times
// are the page's performance.now(), in ms; -1 when the moment did not
// come.
type record struct {
	ID          string            `json:"id"`
	T0          float64           `json:"t0"`
	Trusted     bool              `json:"trusted"`
	Render      string            `json:"render"`
	FetchAt     float64           `json:"fetchAt"`
	HeadersAt   float64           `json:"headersAt"`
	FirstByteAt float64           `json:"firstByteAt"`
	EndAt       float64           `json:"endAt"`
	AbortedAt   float64           `json:"abortedAt"`
	Status      int               `json:"status"`
	Error       string            `json:"error"`
	ErrorKind   runfile.ErrorKind `json:"errorKind"` // set by the relay's notice (overflow)
	Finish      string            `json:"finish"`
	Foreign     int               `json:"foreign"`
	Dropped     int               `json:"dropped"`
	Usage       *usage            `json:"usage"`
	Timings     *timings          `json:"timings"`
	Arrival     []float64         `json:"arrival"`
	// Reasoning is, per event, "only" when it carried thinking and no
	// answer text, "with-answer" when it carried both, "" otherwise.
	Reasoning   []string  `json:"reasoning"`
	ServerNS    []float64 `json:"serverNS"`
	Tokens      []int     `json:"tokens"`
	Insert      []float64 `json:"insert"`
	Paint       []float64 `json:"paint"`
	PaintSource []string  `json:"paintSource"`
	LongFrames  []span    `json:"longFrames"`
	LongTasks   []span    `json:"longTasks"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

type timings struct {
	QueueNS      int64 `json:"queue_ns"`
	PrefillNS    int64 `json:"prefill_ns"`
	DecodeNS     int64 `json:"decode_ns"`
	PromptTokens int   `json:"prompt_tokens"`
	OutputTokens int   `json:"output_tokens"`
}

type span struct {
	Start    float64 `json:"start"`
	Duration float64 `json:"duration"`
	Blocking float64 `json:"blocking"`
}

// ms converts a page duration in ms to ns.
func ms(d float64) int64 { return int64(math.Round(d * 1e6)) }

// request converts the record to a run-file request: t_start is the
// click, every time is from it in the page's clock, and StartedAt is the
// click on the Unix clock (offset: the Unix ns of page time 0).
func (r *record) request(offset int64, throttle float64) runfile.Request {
	since := func(t float64) int64 {
		if t < 0 {
			return 0
		}
		return ms(t - r.T0)
	}
	q := runfile.Request{
		RequestID:     r.ID,
		Status:        r.Status,
		StartedAt:     time.Unix(0, offset+ms(r.T0)).UTC(),
		SentNS:        since(r.FetchAt),
		HeadersNS:     since(r.HeadersAt),
		FirstByteNS:   since(r.FirstByteAt),
		E2ENS:         since(r.EndAt),
		FinishReason:  r.Finish,
		ForeignEvents: r.Foreign,
		ContentEvents: len(r.Arrival),
	}
	switch {
	case r.AbortedAt >= 0:
		q.Aborted = true
	case r.Error != "" && r.ErrorKind != "":
		q.Error, q.ErrorKind = r.Error, r.ErrorKind
	case r.Error != "" && r.Status >= 300:
		// 3xx: a redirect the relay did not follow (it names where it led).
		q.Error, q.ErrorKind = r.Error, stream.KindHTTP
	case r.Error != "":
		q.Error, q.ErrorKind = r.Error, stream.KindCut
		if strings.Contains(r.Error, "Failed to fetch") && r.Status == 0 {
			q.ErrorKind = stream.KindConnect
		}
	}
	if r.Status == 0 && q.Error == "" && !q.Aborted {
		q.Error, q.ErrorKind = "no response", stream.KindConnect
	}
	q.TokenTimesNS = make([]int64, len(r.Arrival))
	for i, t := range r.Arrival {
		q.TokenTimesNS[i] = since(t)
		if i < len(r.Reasoning) && r.Reasoning[i] != "" {
			q.ReasoningEvents++
			if r.Reasoning[i] == "only" {
				q.ReasoningRuns = runfile.ExtendRuns(q.ReasoningRuns, i)
			}
		}
	}
	if len(r.Arrival) > 0 {
		q.TTFTNS = q.TokenTimesNS[0]
		if q.E2ENS < q.TokenTimesNS[len(q.TokenTimesNS)-1] {
			q.E2ENS = q.TokenTimesNS[len(q.TokenTimesNS)-1]
		}
	}
	// The server's emit times and per-event counts, when it sent them
	// (tokenpulse's extension) for every event.
	server := len(r.ServerNS) > 0
	for _, t := range r.ServerNS {
		server = server && t > 0
	}
	sum := 0
	for _, k := range r.Tokens {
		sum += k
	}
	if server {
		q.ServerTimesNS = make([]int64, len(r.ServerNS))
		for i, t := range r.ServerNS {
			q.ServerTimesNS[i] = int64(t)
		}
		q.TokenSource = runfile.TokensServer
		q.OutputTokens = sum
		if len(r.Tokens) == len(q.TokenTimesNS) {
			q.TokenCounts = append([]int(nil), r.Tokens...) // as sent, ones included
		}
	}
	if r.Usage != nil {
		q.PromptTokens = r.Usage.PromptTokens
		if !server {
			q.OutputTokens, q.TokenSource = r.Usage.CompletionTokens, runfile.TokensUsage
		}
	}
	if q.TokenSource == "" {
		q.OutputTokens, q.TokenSource = len(r.Arrival), runfile.TokensEvents
	}
	if t := r.Timings; t != nil {
		q.Server = &runfile.ServerTimings{QueueNS: t.QueueNS, PrefillNS: t.PrefillNS, DecodeNS: t.DecodeNS,
			PromptTokens: t.PromptTokens, DecodeTokens: t.OutputTokens, Source: "tokenpulse"}
	}
	p := &runfile.Paint{Render: r.Render, CPUThrottle: throttle, Trusted: r.Trusted, Dropped: r.Dropped,
		InsertNS: make([]int64, len(r.Insert)), PaintNS: make([]int64, len(r.Paint)), PaintSources: r.PaintSource}
	for i, t := range r.Insert {
		p.InsertNS[i] = -1
		if t >= 0 {
			p.InsertNS[i] = since(t)
		}
	}
	for i, t := range r.Paint {
		p.PaintNS[i] = -1
		if t >= 0 {
			p.PaintNS[i] = since(t)
		}
	}
	for _, f := range r.LongFrames {
		p.LongFrames = append(p.LongFrames, runfile.LongFrame{StartNS: ms(f.Start - r.T0), DurationNS: ms(f.Duration), BlockingNS: ms(f.Blocking)})
	}
	for _, f := range r.LongTasks {
		p.LongTasks = append(p.LongTasks, runfile.LongFrame{StartNS: ms(f.Start - r.T0), DurationNS: ms(f.Duration)})
	}
	q.Paint = p
	return q
}
