package sse

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"
)

// BenchmarkDecode decodes a stream of OpenAI-shaped chat chunks as
// tokenpulse serve sends them (id, one JSON data line, blank line) and
// reports events/s and MB/s, through Next (a string per event) and
// NextRaw (a view of the buffer).
func BenchmarkDecode(b *testing.B) {
	b.Run("Next", func(b *testing.B) {
		benchmarkDecode(b, func(d *Decoder) error { _, err := d.Next(); return err })
	})
	b.Run("NextRaw", func(b *testing.B) {
		benchmarkDecode(b, func(d *Decoder) error { _, err := d.NextRaw(); return err })
	})
}

func benchmarkDecode(b *testing.B, next func(*Decoder) error) {
	const events = 1000
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	enc.Retry(0)
	for i := range events {
		enc.Encode(Event{ID: "req-0123456789abcdef", Data: `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"mock","choices":[{"index":0,"delta":{"content":" lorem"},"finish_reason":null}],"tokenpulse":{"server_ns":1700000000123456789,"offset_ns":` + strconv.Itoa(i*20_000_000) + `,"index":` + strconv.Itoa(i) + `}}`})
	}
	enc.Flush()
	stream := buf.Bytes()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	r := bytes.NewReader(stream)
	for b.Loop() {
		r.Reset(stream)
		d := NewDecoder(r)
		n := 0
		for {
			err := next(d)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != events {
			b.Fatalf("decoded %d events, want %d", n, events)
		}
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(events*b.N)/sec, "events/s")
	b.ReportMetric(float64(len(stream)*b.N)/sec/1e6, "MB/s")
}
