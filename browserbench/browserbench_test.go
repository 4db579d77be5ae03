package browserbench

import (
	"context"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/browser"
	"github.com/tokenpulse/tokenpulse/internal/chatpage"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/measure"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/suite"
)

// needChromium skips a test without Chromium, and fails it under CI.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := browser.Find(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// startMock serves the scripted mock with profile p.
func startMock(t *testing.T, p mock.Profile) string {
	t.Helper()
	srv, err := server.New(mock.New(p, nil), server.Options{Parallel: 64, Queue: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return hs.URL
}

func start(t *testing.T, cfg Config) *Session {
	t.Helper()
	needChromium(t)
	s, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

var prompt = suite.Prompt{ID: "p1", Category: "chat", Text: "Tell me a story."}

func TestSmoke(t *testing.T) {
	url := startMock(t, mock.Profile{TTFT: 100 * time.Millisecond, ITL: 20 * time.Millisecond, Tokens: 20})
	s := start(t, Config{Target: url})
	for _, r := range chatpage.Renders {
		q, err := s.Ask(t.Context(), prompt, r)
		if err != nil {
			t.Fatal(err)
		}
		v := measure.Of(&q, measure.Display(&runfile.Run{}))
		t.Logf("%s: ttft %.1f painted %.1f gaps %v overhead %v src %v trusted %v err %q", r, v.TTFTMs, v.Painted.TTFTMs, v.Painted.GapsMs, v.Painted.OverheadMs, q.Paint.PaintSources, q.Paint.Trusted, q.Error)
	}
	t.Logf("%+v", s.Info())
}
