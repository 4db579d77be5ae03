package stream

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// loopbackPair returns both ends of a loopback TCP connection; the
// client end is wrapped in a stampConn.
func loopbackPair(t *testing.T, kernel bool) (*stampConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}
	sc := newStampConn(c, kernel)
	t.Cleanup(func() { sc.Close(); srv.Close() })
	return sc, srv
}

// Bytes that waited in the socket are stamped with their arrival, before
// the read that took them was even called; a read-return stamp comes
// after the call. The kernel turns timestamping on for the whole system a
// moment after the first socket asks for it, and segments received
// before carry none, so a few tries are allowed.
func TestStampConnKernelTimestamp(t *testing.T) {
	sc, srv := loopbackPair(t, true)
	if sc.k == nil {
		t.Skip("no kernel receive timestamps on this system")
	}
	buf := make([]byte, 64)
	for try := 1; ; try++ {
		beforeWrite := time.Now()
		if _, err := srv.Write([]byte("data: a\n\n")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // let the bytes wait in the socket
		beforeRead := time.Now()
		n, err := sc.Read(buf)
		if err != nil || string(buf[:n]) != "data: a\n\n" {
			t.Fatalf("Read = %q, %v", buf[:n], err)
		}
		at := sc.lastRead()
		if !at.Before(beforeWrite) && at.Before(beforeRead) {
			break
		}
		if try == 5 {
			t.Fatalf("stamp %v after the write began, want it in [0, %v): the arrival, before the read was called",
				at.Sub(beforeWrite), beforeRead.Sub(beforeWrite))
		}
	}

	// The end of the stream and errors read as a net.Conn's.
	srv.Close()
	if _, err := sc.Read(buf); err != io.EOF {
		t.Errorf("Read after close = %v, want io.EOF", err)
	}
	sc.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := sc.Read(buf); err == nil {
		t.Error("Read past the deadline = nil error")
	}
}

func TestStampConnReadStamps(t *testing.T) {
	sc, srv := loopbackPair(t, false)
	if sc.k != nil {
		t.Fatal("kernel timestamps on, want off")
	}
	srv.Write([]byte("x"))
	time.Sleep(5 * time.Millisecond)
	beforeRead := time.Now()
	if _, err := sc.Read(make([]byte, 8)); err != nil {
		t.Fatal(err)
	}
	if at := sc.lastRead(); at.Before(beforeRead) {
		t.Errorf("read stamp %v before the read was called", beforeRead.Sub(at))
	}
}

func TestStampConnDeadlineErrorIsATimeout(t *testing.T) {
	sc, _ := loopbackPair(t, true)
	sc.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := sc.Read(make([]byte, 8))
	var ne net.Error
	if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("Read = %v, want a timeout net.Error", err)
	}
}

// A first event that comes in the same read as the headers arrived when
// they did, not when the transport handed the response over.
func TestFirstEventWithTheHeaders(t *testing.T) {
	c, _ := newScript(t, &script{frames: []string{content("a"), content("b"), finish("stop"), done}})
	for range 3 {
		tr := c.Do(context.Background(), Request{Prompt: "p"})
		if !tr.OK() {
			t.Fatalf("Err = %v", tr.Err)
		}
		if tr.TokenTimes[0] != tr.Headers || tr.FirstByte != tr.Headers {
			t.Errorf("first event at %v, first byte %v, headers %v: want all three the same read's", tr.TokenTimes[0], tr.FirstByte, tr.Headers)
		}
		if tr.GotFirstByte > tr.Headers {
			t.Errorf("GotFirstByte %v after Headers %v", tr.GotFirstByte, tr.Headers)
		}
	}
}
