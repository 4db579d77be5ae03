package stream

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/tokenpulse/tokenpulse/sse"
)

// BenchmarkRead measures the client's own work per event (decode, clock
// read, JSON parse, record) on a stream shaped like tokenpulse serve's,
// read from memory, so the figure is the client's cost and nothing else.
func BenchmarkRead(b *testing.B) {
	const events = 500
	var buf bytes.Buffer
	enc := sse.NewEncoder(&buf)
	enc.Retry(0)
	for i := range events {
		enc.Encode(sse.Event{ID: "tp-X", Data: fmt.Sprintf(`{"id":"chatcmpl-tp-X","object":"chat.completion.chunk","created":1795943231,"model":"mock","choices":[{"index":0,"delta":{"content":" labore"},"finish_reason":null}],"tokenpulse":{"server_ns":1795943232039778457,"offset_ns":%d,"index":%d,"tokens":1}}`, 50_000_000+i*20_000_000, i)})
	}
	enc.Encode(sse.Event{ID: "tp-X", Data: `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`})
	enc.Encode(sse.Event{ID: "tp-X", Data: "[DONE]"})
	enc.Flush()
	stream := buf.Bytes()
	c := &Client{}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		tr := &Trace{RequestID: "tp-X", EchoedID: "tp-X", Start: time.Now(), Status: 200}
		c.read(context.Background(), io.NopCloser(bytes.NewReader(stream)), nil, tr, events, nil)
		if !tr.OK() || tr.ContentEvents() != events {
			b.Fatalf("Err = %v, events = %d", tr.Err, tr.ContentEvents())
		}
	}
	perEvent := b.Elapsed().Seconds() / float64(b.N*events)
	b.ReportMetric(perEvent*1e9, "ns/event")
	b.ReportMetric(1/perEvent, "events/s")
}
