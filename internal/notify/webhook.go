package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/origin"
	"github.com/tokenpulse/tokenpulse/internal/retry"
)

// Webhook posts msg as JSON to the webhook at rawURL with the default
// Poster: a 10 s timeout per attempt, retry's default policy (5 attempts).
func Webhook(ctx context.Context, rawURL string, msg Message) error {
	return (&Poster{}).Post(ctx, rawURL, msg)
}

// Poster posts alerts to webhooks. The zero value is ready to use.
type Poster struct {
	// Client sends the requests (default: a client with a 10 s timeout).
	Client *http.Client
	// Retry is how many times a message is posted at most and how long to
	// wait between attempts when the server does not say (no Retry-After);
	// the zero Policy is retry's default (5 attempts, 1 s doubling).
	Retry retry.Policy
	// MaxWait caps each wait, Retry-After included (default 60 s): a
	// server asking for longer is not waited for.
	MaxWait time.Duration

	// sleep and now are replaced by tests.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

// StatusError is a webhook's refusal: the HTTP status and the start of the
// response body.
type StatusError struct {
	Status int
	Body   string
}

// Error names the status the webhook answered, without its URL.
func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("status %d", e.Status)
	}
	return fmt.Sprintf("status %d: %s", e.Status, e.Body)
}

// Post sends msg to the webhook at rawURL. It retries on network errors,
// 5xx and 429, waiting as the server's Retry-After says (seconds or an
// HTTP date) or else with exponential backoff; any other status outside
// 2xx fails at once with a *StatusError. Errors name the webhook's host,
// never its path or query, which hold the secret of most chat services.
func (p *Poster) Post(ctx context.Context, rawURL string, msg Message) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("alert webhook: want an http:// or https:// URL")
	}
	where := "alert webhook " + u.Host
	body, err := msg.JSON()
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	client := p.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	client = sameOriginOnly(client)
	policy := p.Retry.Resolved()
	maxWait := p.MaxWait
	if maxWait <= 0 {
		maxWait = time.Minute
	}
	sleep, now := p.sleep, p.now
	if sleep == nil {
		sleep = retry.Sleep
	}
	if now == nil {
		now = time.Now
	}

	for try := 1; ; try++ {
		wait, err := postOnce(ctx, client, u, body, now)
		if err == nil {
			return nil
		}
		if wait < 0 || !policy.Again(try) || ctx.Err() != nil {
			return fmt.Errorf("%s (attempt %d of %d): %w", where, try, policy.Attempts, err)
		}
		if wait == 0 {
			wait = policy.Wait(try)
		}
		if wait > maxWait {
			return fmt.Errorf("%s: server asks to wait %s, more than %s: %w", where, wait, maxWait, err)
		}
		if serr := sleep(ctx, wait); serr != nil {
			return fmt.Errorf("%s: %w (then: %w)", where, err, serr)
		}
	}
}

// postOnce posts once. On failure wait says what to do: < 0 give up, 0
// back off, > 0 wait that long (the server's Retry-After).
func postOnce(ctx context.Context, client *http.Client, u *url.URL, body []byte, now func() time.Time) (wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return -1, errors.New("cannot build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tokenpulse")
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // its message repeats the secret URL
		}
		return 0, err
	}
	defer resp.Body.Close()
	if to := origin.Location(resp); to != nil && !origin.Same(to, u) {
		// Named by scheme and host only: a webhook's path is its secret.
		return -1, fmt.Errorf("redirected to another origin (%s://%s), not followed", to.Scheme, to.Host)
	}
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 {
		return 0, nil
	}
	serr := &StatusError{Status: resp.StatusCode, Body: strings.TrimSpace(string(snippet))}
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode < 500 {
		return -1, serr
	}
	return retryAfter(resp.Header.Get("Retry-After"), now()), serr
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
// It returns 0 when the header is absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(h); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// sameOriginOnly returns a copy of c that follows a redirect only within
// the webhook's origin (scheme, host and port; c's own policy there, else
// up to 10): the alert's body and headers never go to another server (see
// package origin). A redirect elsewhere is handed back to postOnce, which
// fails with it.
func sameOriginOnly(c *http.Client) *http.Client {
	cc := *c
	same := c.CheckRedirect
	if same == nil {
		same = func(_ *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		}
	}
	cc.CheckRedirect = origin.CheckRedirect(same)
	return &cc
}
