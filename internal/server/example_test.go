package server_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/internal/server"
)

// words is a Backend that emits a fixed answer, one word per token.
type words []string

func (w words) Models() []string { return []string{"words"} }

func (w words) Warmup(context.Context) (*api.Warmup, error) { return nil, nil }

func (w words) Generate(ctx context.Context, req *server.GenRequest, emit func(server.Piece) error) (server.GenResult, error) {
	for _, t := range w {
		if err := ctx.Err(); err != nil { // before every token: a real abort
			return server.GenResult{}, err
		}
		if err := emit(server.Piece{Text: t}); err != nil {
			return server.GenResult{}, err
		}
	}
	return server.GenResult{OutputTokens: len(w), FinishReason: "stop"}, nil
}

func Example() {
	s, err := server.New(words{"Hello", ",", " world"}, server.Options{})
	if err != nil {
		panic(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
	req.Header.Set("X-Request-ID", "example-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		// Token events carry timestamps; print the frame's shape only.
		if strings.HasPrefix(line, "data: {") {
			line = "data: {...}"
		}
		fmt.Println(line)
	}
	// Output:
	// retry: 0
	//
	// id: example-1
	// data: {...}
	//
	// id: example-1
	// data: {...}
	//
	// id: example-1
	// data: {...}
	//
	// id: example-1
	// data: {...}
	//
	// id: example-1
	// data: [DONE]
	//
}
