package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tokenpulse/tokenpulse/api"
)

// failing is a backend that emits `before` tokens, then fails with err.
type failing struct {
	before int
	err    error
}

func (b *failing) Models() []string                            { return []string{"fake-1"} }
func (b *failing) Warmup(context.Context) (*api.Warmup, error) { return nil, nil }
func (b *failing) Generate(ctx context.Context, req *GenRequest, emit func(Piece) error) (GenResult, error) {
	for range b.before {
		if err := emit(Piece{Text: "a"}); err != nil {
			return GenResult{}, err
		}
	}
	return GenResult{}, b.err
}

// failureAnswer streams a request to a backend that fails after before
// tokens and returns the error body the client reads: the HTTP answer
// when no token went out, else the stream's error event.
func failureAnswer(t *testing.T, before int, err error) api.ErrorDetail {
	t.Helper()
	_, ts, _ := newTestServer(t, &failing{before: before, err: err}, Options{})
	resp := post(t, t.Context(), ts.URL+"/v1/chat/completions", chatBody)
	body := readAll(t, resp.Body)
	resp.Body.Close()
	if before > 0 {
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("after %d tokens: status %d, want 200 and an error event", before, resp.StatusCode)
		}
		var last string
		for _, line := range strings.Split(body, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				last = d
			}
		}
		body = last
	} else if resp.StatusCode < 400 {
		t.Fatalf("before any token: status %d, want an error status", resp.StatusCode)
	}
	var eb api.ErrorBody
	if jerr := json.Unmarshal([]byte(body), &eb); jerr != nil || eb.Error.Message == "" {
		t.Fatalf("after %d tokens: no error body in %q (%v)", before, body, jerr)
	}
	return eb.Error
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// TestFailureCodeIsTheSameBeforeAndInTheStream: a failure reads the same
// (type, code, param) whether it came before the first token (the HTTP
// answer) or after it (the stream's error event). Mid-stream the code was
// the HTTP status text ("Service Unavailable", "Bad Gateway").
func TestFailureCodeIsTheSameBeforeAndInTheStream(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code string
	}{
		{"broken", errors.Join(errors.New("model file changed"), ErrBroken), "backend_broken"},
		{"upstream", &RequestError{Status: http.StatusBadGateway, Type: "server_error", Code: "upstream_error", Message: "gateway: upstream answered 500"}, "upstream_error"},
		{"upstream-timeout", &RequestError{Status: http.StatusGatewayTimeout, Type: "server_error", Code: "upstream_timeout", Message: "gateway: upstream timed out"}, "upstream_timeout"},
		{"rejected", &RequestError{Status: http.StatusBadRequest, Code: "context_length_exceeded", Param: "messages", Message: "too long"}, "context_length_exceeded"},
		{"internal", errors.New("engine fault"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pre, mid := failureAnswer(t, 0, tc.err), failureAnswer(t, 1, tc.err)
			if str(pre.Code) != str(mid.Code) || pre.Type != mid.Type || str(pre.Param) != str(mid.Param) {
				t.Errorf("before the stream: type %s code %s param %s; in it: type %s code %s param %s",
					pre.Type, str(pre.Code), str(pre.Param), mid.Type, str(mid.Code), str(mid.Param))
			}
			if want := tc.code; want != "" && str(mid.Code) != want {
				t.Errorf("code %s, want %s", str(mid.Code), want)
			}
		})
	}
}
