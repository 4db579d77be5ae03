// Package server is tokenpulse's streaming HTTP server: the OpenAI-compatible
// routes with the stream contract of DESIGN.md in front of a [Backend] (the
// embedded engine, a gateway to another runtime, or the scripted mock), so
// that every token source serves the same, measurable stream.
//
// Routes: POST /v1/chat/completions and /v1/completions (streamed and
// not), GET /v1/models, POST /v1/abort?request_id=ID, GET /health (503
// until [Server.WarmUp] is done, then 200 with the warm-up breakdown) and
// GET /metrics (Prometheus).
//
// The stream contract: the first frame is "retry: 0"; every event carries
// "id: <request id>" (the client's X-Request-ID when valid, else a fresh
// random one; echoed in the response header); one token per event, each
// with tokenpulse.server_ns (Unix ns), offset_ns (since the request was
// received) and index; then an event with the finish reason and
// tokenpulse.timings (queue, prefill, decode), the usage event when
// stream_options.include_usage is set, and "data: [DONE]". Response
// headers go out with the first token (or the end), so that a backend can
// still reject a request with a 4xx; the server's timings say where the
// time before the first token went.
//
// Abort: POST /v1/abort and a client that goes away both cancel the
// request's context; a backend checks it before every token. A token the
// backend emits after that is not sent: it is counted (the abort answer's
// tokens_after_abort and the tokens_after_abort_total metric; the goal is
// zero). The abort answer waits, at most Options.AbortWait, until the
// backend has returned. With API keys set, a caller can abort only the
// requests made with its own key (others' ids answer 404).
//
// Admission: Options.Parallel requests generate at once; up to
// Options.Queue more wait, first come first served (a waiter whose client
// leaves is dropped); beyond that the answer is 429 with Retry-After.
//
// Example:
//
//	s, err := server.New(backend, server.Options{Addr: "127.0.0.1:8080", Parallel: 1})
//	if err != nil { ... }
//	ln, _ := net.Listen("tcp", "127.0.0.1:8080")
//	go s.Serve(ctx, ln) // until ctx is done, then a graceful shutdown
//	if err := s.WarmUp(ctx); err != nil { ... }
//
// A Server is safe for concurrent use; its handler serves many requests at
// once.
package server
