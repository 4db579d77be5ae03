package stream_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/stream"
)

// Stream one chat completion and read its timestamps: each content
// event's arrival from the request's start, the server's finish reason
// and its usage. The target is tokenpulse's mock, in process: six tokens,
// one an event.
func ExampleClient_Do() {
	url, stop, err := mock.Serve(mock.Profile{TTFT: 2 * time.Millisecond, ITL: time.Millisecond, Tokens: 6})
	if err != nil {
		panic(err)
	}
	defer stop()

	c := &stream.Client{BaseURL: url, Model: mock.ModelName}
	tr := c.Do(context.Background(), stream.Request{Prompt: "Say six words.", MaxTokens: 16})
	if !tr.OK() {
		panic(tr.Err)
	}
	ttft := tr.TokenTimes[0]
	fmt.Println("status:", tr.Status)
	fmt.Println("content events:", len(tr.TokenTimes))
	fmt.Println("first token after the mock's 2 ms:", ttft >= 2*time.Millisecond)
	fmt.Println("finish reason:", tr.FinishReason)
	fmt.Println("completion tokens (usage):", tr.Usage.CompletionTokens)
	// Output:
	// status: 200
	// content events: 6
	// first token after the mock's 2 ms: true
	// finish reason: stop
	// completion tokens (usage): 6
}

// A request that fails is a Trace with an Error whose Kind is the run
// file's error_kind: here nothing listens on the port.
func ExampleClient_Do_failure() {
	url, stop, err := mock.Serve(mock.Profile{Tokens: 1})
	if err != nil {
		panic(err)
	}
	stop() // the port is closed now

	c := &stream.Client{BaseURL: url, Model: mock.ModelName}
	tr := c.Do(context.Background(), stream.Request{Prompt: "Hello?"})
	fmt.Println("ok:", tr.OK())
	fmt.Println("kind:", tr.Err.Kind)
	fmt.Println("is connect:", tr.Err.Kind == stream.KindConnect)
	// Output:
	// ok: false
	// kind: connect
	// is connect: true
}
