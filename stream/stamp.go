package stream

import (
	"net"
	"sync/atomic"
	"time"
)

// clockBase is the origin of stampConn's readings: a monotonic offset
// from it fits an atomic int64.
var clockBase = time.Now()

// stampConn is a connection that notes when the bytes each of its reads
// returned arrived.
//
// Why. The transport reads the response through a buffer: the read that
// brings the headers often brings the first event too (servers that
// send their headers with the first token always do), and that read runs
// on the transport's goroutine, which then hands the response over to
// the caller's. The caller's first read of the body returns the buffered
// event only after that hand-over, which under load takes milliseconds.
// While a body is being read, only the caller's goroutine reads the
// connection (the transport's waits for the body's end), so the stamp of
// the connection's last read, taken when a read of the body returns,
// belongs to the read that delivered the newest of the bytes returned.
//
// What. Where the kernel can say when bytes arrived (Linux: the socket's
// SO_TIMESTAMPNS receive timestamp, which recvmsg returns for the newest
// segment it read), the stamp is that instant, carried over to Go's
// monotonic clock by subtracting the wall-clock time the bytes waited
// from the monotonic reading taken when the read returned; so neither the
// reader's wake-up nor a pause of the Go runtime enters it. Elsewhere, or
// when the timestamp is missing or implausible (the wall clock stepped),
// it is the instant the read returned; the kernel turns timestamping on
// for the whole system a moment after the first socket asks for it, so
// the very first segments a process receives may come without one. Either
// way the stamp is never later than the read's return, and never
// decreases. Under the race detector the kernel's timestamps are off (see
// raceEnabled).
type stampConn struct {
	net.Conn
	last atomic.Int64  // ns from clockBase of the newest bytes read
	k    *kernelStamps // nil: stamp when reads return
}

// newStampConn wraps c; kernel asks for the kernel's receive timestamps
// where they are available.
func newStampConn(c net.Conn, kernel bool) *stampConn {
	sc := &stampConn{Conn: c}
	if kernel && !raceEnabled {
		sc.k = newKernelStamps(sc, c)
	}
	return sc
}

func (c *stampConn) Read(p []byte) (int, error) {
	if c.k != nil {
		return c.k.read(p)
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.note(time.Now(), 0)
	}
	return n, err
}

// note records bytes that a read returning at now brought, which waited
// lag (0 when unknown) between their arrival and now.
func (c *stampConn) note(now time.Time, lag time.Duration) {
	at := int64(now.Sub(clockBase) - lag)
	if prev := c.last.Load(); at < prev {
		at = prev
	}
	c.last.Store(at)
}

// lastRead returns when the newest bytes read so far arrived.
func (c *stampConn) lastRead() time.Time {
	return clockBase.Add(time.Duration(c.last.Load()))
}

// maxLag bounds the wait of bytes in the socket that a kernel timestamp
// may report; beyond it the wall clock is taken to have stepped.
const maxLag = 10 * time.Second

// connStamp returns the stampConn under a connection the transport
// reports (it may have wrapped ours in TLS), or nil.
func connStamp(c net.Conn) *stampConn {
	for range 4 {
		switch t := c.(type) {
		case *stampConn:
			return t
		case interface{ NetConn() net.Conn }:
			c = t.NetConn()
		default:
			return nil
		}
	}
	return nil
}
