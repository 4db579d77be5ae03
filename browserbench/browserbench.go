// Package browserbench measures what a reader sees: it drives tokenpulse's
// chat page (package chatpage) in headless Chromium against any target,
// and records for every answer, in the page's clock, the click that asked
// (t0), each token's arrival at the page's fetch reader, its insertion
// into the DOM and its paint, with the long animation frames and long
// tasks meanwhile. Package measure derives the measured visible metrics
// (painted_ttft, paint_gap, render_overhead, long_frame) from them.
//
// The page is served from a local origin, the [Relay], which also relays
// /v1/* to the target, so no target needs CORS; the relay's own added
// time is recorded. Each request starts with a real click, dispatched
// through Chromium's input pipeline (Input.dispatchMouseEvent), never a
// script's .click(); its event.timeStamp is t0.
//
//	s, err := browserbench.Start(ctx, browserbench.Config{Target: "http://127.0.0.1:8080"})
//	defer s.Close()
//	req, err := s.Ask(ctx, prompt, chatpage.RenderFrame)
//
// A Session drives one tab and is not safe for concurrent use.
package browserbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	tpbrowser "github.com/tokenpulse/tokenpulse/internal/browser"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
	"github.com/tokenpulse/tokenpulse/suite"
)

// Config is what a session measures and how.
type Config struct {
	// Target is the base URL of the OpenAI-compatible endpoint.
	Target string
	// Header is added to every relayed request (API key, -H).
	Header http.Header
	// Model is sent in every request ("" sends none).
	Model string
	// MaxTokens overrides every prompt's output limit when > 0.
	MaxTokens int
	// CPUThrottle is Chromium's CPU slowdown factor (≤ 1: none).
	CPUThrottle float64
	// Busy makes the page busy-wait this long after each DOM insertion,
	// a stand-in for a costly relayout (tests and experiments).
	Busy time.Duration
	// Timeout limits each answer (0: 2 minutes).
	Timeout time.Duration
	// Width is the viewport width in CSS pixels (0: 1280).
	Width int
}

// Session is one Chromium tab on the chat page, behind a relay.
type Session struct {
	cfg    Config
	relay  *Relay
	tab    context.Context
	cancel context.CancelFunc
	info   runfile.Browser
	// page is a team's own page (StartPage); nil on tokenpulse's.
	page *Page
}

// Start starts the relay and Chromium, opens the page and aligns the
// page's clock with the Unix clock. Close releases both.
func Start(ctx context.Context, cfg Config) (*Session, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if cfg.CPUThrottle < 1 {
		cfg.CPUThrottle = 1
	}
	relay, err := NewRelay(cfg.Target, cfg.Header)
	if err != nil {
		return nil, err
	}
	tab, cancel, err := tpbrowser.Start(ctx, cfg.Width)
	if err != nil {
		relay.Close()
		return nil, err
	}
	s := &Session{cfg: cfg, relay: relay, tab: tab, cancel: cancel}
	if err := s.open(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// open loads the page, checks its instruments, sets the CPU throttling
// and measures the clock offset.
func (s *Session) open() error {
	q := url.Values{}
	if s.cfg.Busy > 0 {
		q.Set("busy", strconv.FormatFloat(float64(s.cfg.Busy)/1e6, 'f', -1, 64))
	}
	u := s.relay.PageURL(q)
	if err := chromedp.Do(s.tab, chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("#send"))); err != nil {
		return fmt.Errorf("open the chat page: %w", err)
	}
	type caps struct {
		Ready   bool `json:"ready"`
		Element bool `json:"element"`
		LoAF    bool `json:"loaf"`
	}
	var c caps
	for range 100 {
		var err error
		c, err = chromedp.Run(s.tab, chromedp.Evaluate[caps](`({ready: !!window.tokenpulse, element: !!(window.tokenpulse && tokenpulse.hasElementTiming), loaf: !!(window.tokenpulse && tokenpulse.hasLoAF)})`))
		if err != nil {
			return fmt.Errorf("the chat page: %w", err)
		}
		if c.Ready {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !c.Ready {
		return errors.New("the chat page did not start (window.tokenpulse missing)")
	}
	if err := s.setup("embedded"); err != nil {
		return err
	}
	s.info.Relay = s.relay.URL()
	s.info.ElementTiming, s.info.LongAnimationFrames = c.Element, c.LoAF
	return nil
}

// setup sets the CPU throttling and measures the browser's version and
// the clock offset of the page now open.
func (s *Session) setup(pageName string) error {
	if s.cfg.CPUThrottle > 1 {
		if _, err := chromedp.Call(s.tab, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: s.cfg.CPUThrottle}); err != nil {
			return fmt.Errorf("CPU throttling: %w", err)
		}
	}
	v, err := chromedp.CallBrowser(s.tab, browser.GetVersion, cdp.Empty{})
	if err != nil {
		return fmt.Errorf("browser version: %w", err)
	}
	off, unc, err := s.clockOffset()
	if err != nil {
		return err
	}
	s.info = runfile.Browser{
		Chromium: v.Product, CPUThrottle: s.cfg.CPUThrottle, Page: pageName,
		ClockOffsetNS: off, ClockUncertaintyNS: unc,
	}
	return nil
}

// clockOffset returns the Unix ns of the page's performance.now() = 0:
// the reading with the shortest of several round trips, taken at its
// midpoint, and half that round trip as its uncertainty.
func (s *Session) clockOffset() (offset, uncertainty int64, err error) {
	best := int64(math.MaxInt64)
	for range 7 {
		before := time.Now()
		now, err := chromedp.Run(s.tab, chromedp.Evaluate[float64](`performance.now()`))
		after := time.Now()
		if err != nil {
			return 0, 0, fmt.Errorf("page clock: %w", err)
		}
		rtt := after.Sub(before).Nanoseconds()
		if rtt < best {
			best = rtt
			mid := before.UnixNano() + rtt/2
			offset = mid - int64(math.Round(now*1e6))
		}
	}
	return offset, best / 2, nil
}

// Info returns what the session records of itself in the run file, with
// the relay's holds so far.
func (s *Session) Info() runfile.Browser {
	info := s.info
	if s.relay != nil {
		info.RelayHoldMs = stats.Describe(s.relay.Holds())
	}
	return info
}

// Close stops Chromium and the relay.
func (s *Session) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	if s.relay != nil {
		s.relay.Close()
	}
}

// prepared is what the page's next click sends (tokenpulse.prepare).
type prepared struct {
	ID        string `json:"id"`
	Prompt    string `json:"prompt"`
	System    string `json:"system,omitempty"`
	MaxTokens int    `json:"maxTokens,omitempty"`
	Model     string `json:"model,omitempty"`
	Render    string `json:"render"`
}

// Ask asks prompt p with render strategy render by a real click, waits
// for the answer and its paints, and returns its record. The error is
// the browser's; a failed answer is a request with Error set.
func (s *Session) Ask(ctx context.Context, p suite.Prompt, render string) (runfile.Request, error) {
	if s.page != nil {
		return s.askPage(ctx, p)
	}
	id, err := s.click(p, render)
	if err != nil {
		return runfile.Request{}, err
	}
	return s.result(ctx, id, p)
}

// click prepares the page's next request and clicks its send button.
func (s *Session) click(p suite.Prompt, render string) (string, error) {
	mt := p.MaxTokens
	if s.cfg.MaxTokens > 0 {
		mt = s.cfg.MaxTokens
	}
	pr := prepared{ID: newID(), Prompt: p.Text, System: p.System, MaxTokens: mt, Model: s.cfg.Model, Render: render}
	if _, err := call[bool](s.tab, "tokenpulse.prepare", false, pr); err != nil {
		return "", fmt.Errorf("prepare the page: %w", err)
	}
	return pr.ID, s.clickSelector("#send")
}

// clickSelector clicks the centre of the element sel names with a real
// mouse press and release.
func (s *Session) clickSelector(sel string) error {
	xy, err := call[[]float64](s.tab, `(sel) => {
		const el = document.querySelector(sel);
		if (!el) return null;
		el.scrollIntoView({block: "nearest"});
		const r = el.getBoundingClientRect();
		return [r.x + r.width / 2, r.y + r.height / 2];
	}`, false, sel)
	if err != nil || len(xy) != 2 {
		return fmt.Errorf("find %s on the page: %v", sel, err)
	}
	for _, t := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		ev := input.DispatchMouseEventParams{Type: t, X: xy[0], Y: xy[1], Button: input.MouseButtonLeft, ClickCount: 1}
		if t == input.DispatchMouseEventTypeMousePressed {
			ev.Buttons = 1
		}
		if _, err := chromedp.Call(s.tab, input.DispatchMouseEvent, ev); err != nil {
			return fmt.Errorf("click %s: %w", sel, err)
		}
	}
	return nil
}

// result waits for the page's record of answer id and converts it.
func (s *Session) result(ctx context.Context, id string, p suite.Prompt) (runfile.Request, error) {
	tctx, cancel := context.WithTimeout(s.tab, s.cfg.Timeout+5*time.Second)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	rec, err := call[*record](tctx, "tokenpulse.result", true, id)
	if err != nil {
		if ctx.Err() == nil && tctx.Err() != nil {
			return runfile.Request{RequestID: id, Category: p.Category, PromptID: p.ID, Error: "no answer within " + s.cfg.Timeout.String(), ErrorKind: runfile.ErrorTimeout}, nil
		}
		return runfile.Request{}, fmt.Errorf("read the page's record: %w", err)
	}
	if rec == nil {
		return runfile.Request{}, errors.New("the page has no record of request " + id + " (the click did not reach the send button)")
	}
	call[any](s.tab, "tokenpulse.forget", false, id)
	q := rec.request(s.info.ClockOffsetNS, s.cfg.CPUThrottle)
	q.Category, q.PromptID = p.Category, p.ID
	return q, nil
}

// Painted returns how many tokens of answer id the page has inserted so
// far.
func (s *Session) Painted(id string) (int, error) {
	return call[int](s.tab, "tokenpulse.painted", false, id)
}

// ended reports whether answer id is over in the page (ended, failed or
// aborted), or unknown to it: no more of its tokens will come.
func (s *Session) ended(id string) (bool, error) {
	return call[bool](s.tab, "tokenpulse.ended", false, id)
}

// call evaluates fn(args...) in the page, each argument passed as JSON,
// and decodes the result (awaited when it is a promise and await is set).
func call[T any](tab context.Context, fn string, await bool, args ...any) (T, error) {
	expr := "(" + fn + ")("
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			var zero T
			return zero, err
		}
		if i > 0 {
			expr += ", "
		}
		expr += string(b)
	}
	expr += ")"
	if await {
		return chromedp.Run(tab, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	}
	return chromedp.Run(tab, chromedp.Evaluate[T](expr))
}

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return "tp-" + hex.EncodeToString(b[:])
}
