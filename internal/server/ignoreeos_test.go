package server

import (
	"io"
	"strings"
	"testing"
)

// shapeRecorder is a fake backend whose Check records whether each
// request asked to ignore the end of sequence.
type shapeRecorder struct {
	*fake
	ignoreEOS chan bool
}

func (r *shapeRecorder) Check(req *GenRequest) error {
	r.ignoreEOS <- req.IgnoreEOS
	return nil
}

// TestIgnoreEOSIsParsed checks that both APIs hand ignore_eos to the
// backend, true only when the body says true.
func TestIgnoreEOSIsParsed(t *testing.T) {
	r := &shapeRecorder{fake: newFake("a"), ignoreEOS: make(chan bool, 8)}
	_, ts, _ := newTestServer(t, r, Options{})
	cases := []struct {
		path, body string
		want       bool
	}{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"stream":true,"ignore_eos":true}`, true},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"stream":true,"ignore_eos":false}`, false},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"stream":true}`, false},
		{"/v1/completions", `{"prompt":"hi","stream":true,"ignore_eos":true}`, true},
		{"/v1/completions", `{"prompt":"hi","stream":true}`, false},
	}
	for _, c := range cases {
		resp := post(t, t.Context(), ts.URL+c.path, c.body)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: status %d", c.path, c.body, resp.StatusCode)
		}
		if got := <-r.ignoreEOS; got != c.want {
			t.Errorf("%s %s: backend saw IgnoreEOS %v, want %v", c.path, strings.TrimSpace(c.body), got, c.want)
		}
	}
}
