package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/internal/profiling"
	"github.com/tokenpulse/tokenpulse/internal/server"
	"github.com/tokenpulse/tokenpulse/report/flame"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// fakeProfile is a CPU profile of one stack, remoteWork called by
// remoteServe, worth ns nanoseconds.
func fakeProfile(t *testing.T, ns int64) []byte {
	t.Helper()
	serve := &profile.Function{ID: 1, Name: "github.com/tokenpulse/tokenpulse/fake.remoteServe"}
	work := &profile.Function{ID: 2, Name: "github.com/tokenpulse/tokenpulse/fake.remoteWork"}
	l1 := &profile.Location{ID: 1, Address: 0x10, Line: []profile.Line{{Function: serve}}}
	l2 := &profile.Location{ID: 2, Address: 0x20, Line: []profile.Line{{Function: work}}}
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        1e7,
		DurationNanos: 5e9,
		Function:      []*profile.Function{serve, work},
		Location:      []*profile.Location{l1, l2},
		Sample:        []*profile.Sample{{Location: []*profile.Location{l2, l1}, Value: []int64{ns / 1e7, ns}}},
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pprofTarget serves the mock behind h and, when expose is set, a fake
// /debug/pprof/ whose profile windows it counts.
type pprofTarget struct {
	mu      sync.Mutex
	seconds []string
}

func (p *pprofTarget) start(t *testing.T, expose bool) string {
	t.Helper()
	srv, err := server.New(mock.New(mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 6, TokensPerEvent: 1}, nil), server.Options{Parallel: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.WarmUp(t.Context()); err != nil {
		t.Fatal(err)
	}
	prof := fakeProfile(t, 300e6)
	mux := http.NewServeMux()
	mux.Handle("/", srv.Handler())
	if expose {
		mux.HandleFunc("/debug/pprof/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("index")) })
		mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
			p.mu.Lock()
			p.seconds = append(p.seconds, r.URL.Query().Get("seconds"))
			p.mu.Unlock()
			w.Write(prof)
		})
	}
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestBenchProfileFromRemote(t *testing.T) {
	var target pprofTarget
	url := target.start(t, true)
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--profile", "--suite", writeBenchSuite(t, "30s"), "-n", "3",
		"--warmup", "0", "--out", out, "--no-history", "-q", "--report", "html")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Profile == nil || run.Profile.File != profiling.File || run.Profile.Source != profiling.SourceRemote || run.Profile.Label != "" {
		t.Fatalf("run file's profile %+v: want the remote cpu.pprof", run.Profile)
	}
	target.mu.Lock()
	windows := slices.Clone(target.seconds)
	target.mu.Unlock()
	if len(windows) == 0 || windows[0] != "5" {
		t.Fatalf("profile windows asked: %v, want 5-second windows", windows)
	}
	f, err := os.Open(filepath.Join(out, profiling.File))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := flame.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	g, err := flame.Build(p, flame.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	// Every window the target served is merged into the file.
	if want := int64(len(windows)) * 300e6; g.Root.Total != want {
		t.Errorf("merged profile holds %d ns, want %d (%d windows of 300 ms)", g.Root.Total, want, len(windows))
	}
	if run.Profile.DurationMS != float64(len(windows))*5000 {
		t.Errorf("duration %v ms, want %d windows of 5 s", run.Profile.DurationMS, len(windows))
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="flame-graph"`, "fake.remoteWork", "/debug/pprof/profile"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

func TestBenchProfileRemoteNotExposed(t *testing.T) {
	var target pprofTarget
	url := target.start(t, false)
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--url", url, "--profile", "--suite", writeBenchSuite(t, "30s"), "-n", "2",
		"--warmup", "0", "--out", out, "--no-history", "-q")
	if code != exitOK {
		t.Fatalf("a target without profiles must not fail the run: exit %d:\n%s", code, text)
	}
	if !strings.Contains(text, "does not serve /debug/pprof/") || !strings.Contains(text, "serve --pprof") {
		t.Errorf("want a warning naming serve --pprof:\n%s", text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Profile != nil {
		t.Errorf("profile %+v recorded for a target without one", run.Profile)
	}
	if _, err := os.Stat(filepath.Join(out, profiling.File)); !os.IsNotExist(err) {
		t.Errorf("cpu.pprof: %v, want none", err)
	}
}

// TestBenchEmbeddedProfileKeepsServerApart profiles the embedded server
// (the default) and checks the labels: every sample in the engine's
// forward pass is the server's, and the report draws the graph.
//
// The profiler samples at 100 Hz: four answers of at most 12 tokens from
// the bundled model took about 20 ms and left a sample or none in the
// forward pass, so the test failed by chance. 16 answers of 64 tokens
// each (--ignore-eos: no early end) give it some 0.5 s of generation.
func TestBenchEmbeddedProfileKeepsServerApart(t *testing.T) {
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--suite", writeBenchSuite(t, "30s"), "-n", "16", "--warmup", "1",
		"--max-tokens", "64", "--ignore-eos", "--out", out, "--no-history", "-q", "--report", "html")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	if strings.Contains(text, "already running") {
		t.Skip("this test process is being profiled already (go test -cpuprofile)")
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Profile == nil || run.Profile.Source != profiling.SourceEmbedded || run.Profile.Label != "tokenpulse=server" {
		t.Fatalf("profile %+v: want the embedded one, server labelled", run.Profile)
	}
	f, err := os.Open(filepath.Join(out, profiling.File))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := flame.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	labelled, forward := 0, 0
	for _, s := range p.Sample {
		server := slices.Contains(s.Label[profiling.LabelKey], profiling.LabelValue)
		if server {
			labelled++
		}
		for _, l := range s.Location {
			for _, ln := range l.Line {
				if ln.Function != nil && strings.HasSuffix(ln.Function.Name, "engine.(*Model).forward") {
					forward++
					if !server {
						t.Fatalf("a sample in the engine's forward pass has no server label: %v", s.Label)
					}
				}
			}
		}
	}
	if labelled == 0 || forward == 0 {
		t.Fatalf("%d labelled samples, %d in forward, of %d: want the server's generation sampled", labelled, forward, len(p.Sample))
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte(`id="flame-graph"`)) || !bytes.Contains(html, []byte("engine.(*Model).forward")) {
		t.Error("report.html does not draw the flame graph of the engine")
	}
}

func TestBenchNoProfile(t *testing.T) {
	out := t.TempDir()
	text, code := cliRun(t, "bench", "--profile=false", "--suite", writeBenchSuite(t, "30s"), "-n", "1", "--warmup", "0",
		"--out", out, "--no-history", "-q")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, text)
	}
	run, err := runfile.Load(filepath.Join(out, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if run.Profile != nil {
		t.Errorf("--profile=false recorded %+v", run.Profile)
	}
}

func TestServePprofRefusedBeyondLoopback(t *testing.T) {
	// --insecure lets the API through without a key, never the profiles.
	if got := run([]string{"serve", "--pprof", "--insecure", "--addr", "0.0.0.0:0"}); got != exitUsage {
		t.Errorf("serve --pprof on 0.0.0.0 without a key: exit %d, want %d", got, exitUsage)
	}
}

// TestBenchProfileRemoteRedirected: a target whose /debug/pprof/
// redirects to another origin: nothing is sent there, and the run warns
// naming the redirect, not the other origin's answer.
func TestBenchProfileRemoteRedirected(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Team"))
		mu.Unlock()
		http.Error(w, "other origin", http.StatusInternalServerError)
	}))
	defer other.Close()
	var target pprofTarget
	base, err := url.Parse(target.start(t, false))
	if err != nil {
		t.Fatal(err)
	}
	mock := httputil.NewSingleHostReverseProxy(base)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/debug/pprof/") {
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
			return
		}
		mock.ServeHTTP(w, r)
	}))
	defer front.Close()
	t.Setenv("TP_TEST_KEY", "sk-secret")
	text, code := cliRun(t, "bench", "--url", front.URL, "--profile", "--api-key-env", "TP_TEST_KEY", "-H", "X-Team: team-secret",
		"--suite", writeBenchSuite(t, "30s"), "-n", "1", "--warmup", "0", "--out", t.TempDir(), "--no-history", "-q")
	if code != exitOK {
		t.Errorf("exit %d: a profile not taken must not fail the run:\n%s", code, text)
	}
	if want := "redirected to " + other.URL + "/debug/pprof/, not followed"; !strings.Contains(text, want) || strings.Contains(text, "answered 500") {
		t.Errorf("want a warning naming the redirect (%s), not the other origin's answer:\n%s", want, text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) != 0 {
		t.Errorf("the other origin got %q", leaked)
	}
}

// TestBenchProfileFromRemoteEndpointURL: a --url given as the API's base
// (…/v1) or as the full endpoint still finds /debug/pprof/ at the
// server's root, where the client finds /health and /metrics.
func TestBenchProfileFromRemoteEndpointURL(t *testing.T) {
	var target pprofTarget
	url := target.start(t, true)
	for _, u := range []string{url + "/v1", url + "/v1/chat/completions"} {
		t.Run(u[len(url):], func(t *testing.T) {
			out := t.TempDir()
			text, code := cliRun(t, "bench", "--url", u, "--profile", "--suite", writeBenchSuite(t, "30s"), "-n", "2",
				"--warmup", "0", "--out", out, "--no-history", "-q")
			if code != exitOK {
				t.Fatalf("exit %d:\n%s", code, text)
			}
			run, err := runfile.Load(filepath.Join(out, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			if run.Profile == nil || run.Profile.Source != profiling.SourceRemote {
				t.Fatalf("run file's profile %+v: want the remote cpu.pprof\n%s", run.Profile, text)
			}
		})
	}
}
