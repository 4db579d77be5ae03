// Package server is tokenpulse's streaming HTTP server: the OpenAI-compatible
// routes with the stream contract of DESIGN.md (retry: 0, an id on every
// event, one token per event, server emit times, real abort, admission
// with a bounded queue, warm-up before readiness, Prometheus metrics) in
// front of a [Backend]: the embedded engine, a gateway to another runtime,
// or the scripted mock.
package server
