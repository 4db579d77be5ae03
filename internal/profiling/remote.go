package profiling

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/profile"

	"github.com/tokenpulse/tokenpulse/internal/origin"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/stats"
)

// ErrNotExposed is returned by Remote for a target that serves no
// /debug/pprof/ (not a tokenpulse, or one started without --pprof).
var ErrNotExposed = errors.New("the target does not serve /debug/pprof/ (start it with: tokenpulse serve --pprof)")

// DefaultWindow is the length of each profile Remote asks for.
const DefaultWindow = 5 * time.Second

// Target is the remote process to profile.
type Target struct {
	// BaseURL is the target's base URL ("http://127.0.0.1:8080").
	BaseURL string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Header holds extra request headers.
	Header http.Header
	// Window is the length of each profile asked for (DefaultWindow when
	// 0): the run is covered by consecutive windows, and Stop waits for
	// the one under way, so a run's profile ends at most a window after
	// the run (the idle tail adds no samples).
	Window time.Duration
	// Client makes the requests (http.DefaultClient when nil), through a
	// copy that follows no redirect (package origin): the key and the
	// headers go to BaseURL's origin only, and a redirect fails the fetch,
	// naming where it led.
	Client *http.Client
}

func (t Target) client() *http.Client {
	if t.Client != nil {
		return origin.Client(t.Client)
	}
	return origin.Client(http.DefaultClient)
}

func (t Target) get(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.BaseURL, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range t.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if t.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.APIKey)
	}
	return t.client().Do(req)
}

// Probe checks that the target serves its profiles to this client.
func (t Target) Probe(ctx context.Context) error {
	resp, err := t.get(ctx, "/debug/pprof/")
	if err != nil {
		return fmt.Errorf("reaching /debug/pprof/: %w", err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if msg := origin.NotFollowed(resp); msg != "" {
		return fmt.Errorf("GET /debug/pprof/ answered %s: %s", resp.Status, msg)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("the target refused /debug/pprof/ (%s): it wants its API key", resp.Status)
	}
	return fmt.Errorf("%w: GET /debug/pprof/ answered %s", ErrNotExposed, resp.Status)
}

// remote is a profile of a remote process, taken in windows.
type remote struct {
	t      Target
	dir    string
	cancel context.CancelFunc
	stop   chan struct{}
	done   chan struct{}

	mu    sync.Mutex
	parts []*profile.Profile
	err   error
}

// Remote starts profiling the target (after a Probe) into dir/cpu.pprof:
// consecutive windows of /debug/pprof/profile until Stop.
func Remote(ctx context.Context, dir string, t Target) (Session, error) {
	if err := t.Probe(ctx); err != nil {
		return nil, err
	}
	if t.Window <= 0 {
		t.Window = DefaultWindow
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &remote{t: t, dir: dir, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{})}
	go r.loop(ctx)
	return r, nil
}

func (r *remote) loop(ctx context.Context) {
	defer close(r.done)
	secs := max(int((r.t.Window+time.Second-1)/time.Second), 1)
	for {
		t0 := time.Now()
		p, err := r.window(ctx, secs)
		r.mu.Lock()
		if p != nil {
			r.parts = append(r.parts, p)
		}
		if err != nil && r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
		if err != nil {
			return
		}
		if time.Since(t0) < time.Duration(secs)*time.Second/2 {
			// The target answered long before the window it was asked
			// for: it does not honour seconds; asking again would spin.
			return
		}
		select {
		case <-r.stop:
			return
		default:
		}
	}
}

// window fetches one profile of secs seconds.
func (r *remote) window(ctx context.Context, secs int) (*profile.Profile, error) {
	resp, err := r.t.get(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs))
	if err != nil {
		return nil, fmt.Errorf("fetching the profile: %w", err)
	}
	defer resp.Body.Close()
	if msg := origin.NotFollowed(resp); msg != "" {
		return nil, fmt.Errorf("fetching the profile: %s: %s", resp.Status, msg)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("fetching the profile: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the profile: %s: %s", resp.Status, strings.TrimSpace(string(b[:min(len(b), 200)])))
	}
	p, err := profile.ParseData(b)
	if err != nil {
		return nil, fmt.Errorf("the target's profile: %w", err)
	}
	return p, nil
}

// Stop waits for the window under way, merges the windows and writes
// them. What was fetched before an error is still written, with the
// error.
func (r *remote) Stop() (*runfile.Profile, error) {
	close(r.stop)
	<-r.done
	r.cancel()
	r.mu.Lock()
	parts, err := r.parts, r.err
	r.mu.Unlock()
	if len(parts) == 0 {
		if err == nil {
			err = errors.New("no profile was fetched")
		}
		return nil, err
	}
	merged, merr := profile.Merge(parts)
	if merr != nil {
		return nil, fmt.Errorf("merging the profile's windows: %w", merr)
	}
	var dur int64
	for _, p := range parts {
		dur += p.DurationNanos
	}
	merged.DurationNanos = dur
	var buf bytes.Buffer
	if werr := merged.Write(&buf); werr != nil {
		return nil, werr
	}
	if werr := os.WriteFile(filepath.Join(r.dir, File), buf.Bytes(), 0o644); werr != nil {
		return nil, werr
	}
	return &runfile.Profile{File: File, Source: SourceRemote, DurationMS: stats.Millis(int64(dur))}, err
}
