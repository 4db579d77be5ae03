package browserbench

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	tpbrowser "github.com/tokenpulse/tokenpulse/internal/browser"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/suite"
)

//go:embed watch.js
var watchJS string

// RenderPage is the render strategy recorded for a team's own page: the
// page renders as it does.
const RenderPage = "page"

// Page names a team's own web app to measure instead of tokenpulse's
// chat page: the prompt is typed into Input, Send is clicked, and the
// text growth of Output is watched (a MutationObserver; each growth's
// paint is the end of the first frame after it). The network's arrivals
// in the page are the chunks of the streamed fetch responses after the
// click; each growth is set beside the last chunk that came before it.
type Page struct {
	URL, Input, Send, Output string
	// Quiet is how long neither the output nor the network may move for
	// an answer to count as finished (0: 1.5 s).
	Quiet time.Duration
}

// StartPage starts Chromium on a team's own page p, with tokenpulse's
// watcher installed before the page's own scripts. cfg's Target, Header,
// Model, MaxTokens and Busy are not used: the page talks to its own
// backend.
func StartPage(ctx context.Context, cfg Config, p Page) (*Session, error) {
	if p.URL == "" || p.Input == "" || p.Send == "" || p.Output == "" {
		return nil, errors.New("a page needs its URL and the selectors of its input, send button and output")
	}
	if p.Quiet <= 0 {
		p.Quiet = 1500 * time.Millisecond
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.CPUThrottle < 1 {
		cfg.CPUThrottle = 1
	}
	tab, cancel, err := tpbrowser.Start(ctx, cfg.Width)
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, tab: tab, cancel: cancel, page: &p}
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchJS}); err != nil {
		s.Close()
		return nil, fmt.Errorf("install the watcher: %w", err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(p.URL), chromedp.WaitReady(chromedp.CSS(p.Input))); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s and find --input %s: %w", p.URL, p.Input, err)
	}
	if err := s.setup("page"); err != nil {
		s.Close()
		return nil, err
	}
	s.info.Page, s.info.Input, s.info.Send, s.info.Output = p.URL, p.Input, p.Send, p.Output
	return s, nil
}

// askPage types p's text into the page's input, clicks its send button
// and watches its output until the answer settles.
func (s *Session) askPage(ctx context.Context, p suite.Prompt) (runfile.Request, error) {
	pg := s.page
	ok, err := call[bool](s.tab, "__tokenpulseWatch.arm", false, pg.Send, pg.Output)
	if err != nil {
		return runfile.Request{}, fmt.Errorf("the page's watcher: %w", err)
	}
	if !ok {
		return runfile.Request{}, fmt.Errorf("--output %s matches nothing on the page", pg.Output)
	}
	cleared, err := call[bool](s.tab, `(sel) => {
		const el = document.querySelector(sel);
		if (!el) return false;
		if ("value" in el) el.value = ""; else el.textContent = "";
		el.dispatchEvent(new Event("input", {bubbles: true}));
		return true;
	}`, false, pg.Input)
	if err != nil || !cleared {
		return runfile.Request{}, fmt.Errorf("--input %s matches nothing on the page (%v)", pg.Input, err)
	}
	if err := s.clickSelector(pg.Input); err != nil {
		return runfile.Request{}, err
	}
	if _, err := chromedp.Call(s.tab, input.InsertText, input.InsertTextParams{Text: p.Text}); err != nil {
		return runfile.Request{}, fmt.Errorf("type the prompt: %w", err)
	}
	if err := s.clickSelector(pg.Send); err != nil {
		return runfile.Request{}, err
	}
	type state struct {
		Settled bool `json:"settled"`
		Clicked bool `json:"clicked"`
		Inserts int  `json:"inserts"`
	}
	deadline := time.Now().Add(s.cfg.Timeout)
	var st state
	for {
		if st, err = call[state](s.tab, "__tokenpulseWatch.state", false, float64(pg.Quiet)/1e6); err != nil {
			return runfile.Request{}, fmt.Errorf("the page's watcher: %w", err)
		}
		if st.Settled || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !st.Clicked {
		return runfile.Request{}, fmt.Errorf("the click on --send %s did not reach it", pg.Send)
	}
	rec, err := call[watched](s.tab, "__tokenpulseWatch.record", false)
	if err != nil {
		return runfile.Request{}, fmt.Errorf("the page's watcher: %w", err)
	}
	q := rec.request(s.info.ClockOffsetNS, s.cfg.CPUThrottle)
	q.RequestID, q.Category, q.PromptID = newID(), p.Category, p.ID
	if len(rec.Inserts) == 0 {
		q.Error, q.ErrorKind = fmt.Sprintf("no text appeared in --output %s within %v", pg.Output, s.cfg.Timeout), runfile.ErrorTimeout
	}
	return q, ctx.Err()
}

// watched is what watch.js records of one answer, in the page's clock.
type watched struct {
	T0         float64   `json:"t0"`
	Trusted    bool      `json:"trusted"`
	Chunks     []float64 `json:"chunks"`
	Inserts    []float64 `json:"inserts"`
	Paints     []float64 `json:"paints"`
	LongFrames []span    `json:"longFrames"`
}

// request converts the watched answer: each growth of the output is an
// event, arriving with the last network chunk before it (or, when none
// came, at its insertion).
func (w *watched) request(offset int64, throttle float64) runfile.Request {
	since := func(t float64) int64 { return ms(t - w.T0) }
	q := runfile.Request{StartedAt: time.Unix(0, offset+ms(w.T0)).UTC(), ContentEvents: len(w.Inserts),
		OutputTokens: len(w.Inserts), TokenSource: runfile.TokensEvents}
	p := &runfile.Paint{Render: RenderPage, CPUThrottle: throttle, Trusted: w.Trusted}
	k := 0
	var last float64 = -1
	for i, in := range w.Inserts {
		for k < len(w.Chunks) && w.Chunks[k] <= in {
			last = w.Chunks[k]
			k++
		}
		at := in
		if last >= w.T0 {
			at = last
		}
		q.TokenTimesNS = append(q.TokenTimesNS, since(at))
		p.InsertNS = append(p.InsertNS, since(in))
		paint := int64(-1)
		if w.Paints[i] >= 0 {
			paint = since(w.Paints[i])
		}
		p.PaintNS = append(p.PaintNS, paint)
		p.PaintSources = append(p.PaintSources, "frame")
	}
	if len(w.Chunks) > 0 {
		q.Status = 200
		q.FirstByteNS = since(w.Chunks[0])
		q.E2ENS = since(w.Chunks[len(w.Chunks)-1])
	}
	if n := len(q.TokenTimesNS); n > 0 {
		q.Status = max(q.Status, 200)
		q.TTFTNS = q.TokenTimesNS[0]
		q.E2ENS = max(q.E2ENS, q.TokenTimesNS[n-1])
	}
	for _, f := range w.LongFrames {
		p.LongFrames = append(p.LongFrames, runfile.LongFrame{StartNS: ms(f.Start - w.T0), DurationNS: ms(f.Duration), BlockingNS: ms(f.Blocking)})
	}
	q.Paint = p
	return q
}
