package sse_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/tokenpulse/tokenpulse/sse"
)

func ExampleDecoder() {
	stream := "retry: 0\n\n" +
		"id: req-1\ndata: {\"n\":1}\n\n" +
		": keep-alive\n\n" +
		"id: req-1\r\ndata: line one\r\ndata: line two\r\n\r\n" +
		"data: [DONE]\n\n"
	d := sse.NewDecoder(strings.NewReader(stream))
	for {
		ev, err := d.Next()
		if err == io.EOF {
			fmt.Println("end; retry was", d.Retry())
			return
		}
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("id=%q data=%q\n", ev.ID, ev.Data)
	}
	// Output:
	// id="req-1" data="{\"n\":1}"
	// id="req-1" data="line one\nline two"
	// id="" data="[DONE]"
	// end; retry was 0
}

func ExampleEncoder() {
	var sb strings.Builder
	enc := sse.NewEncoder(&sb)
	enc.Retry(0)
	enc.Encode(sse.Event{ID: "req-1", Data: "hello"})
	enc.Flush()
	fmt.Print(sb.String())
	// Output:
	// retry: 0
	//
	// id: req-1
	// data: hello
	//
}
