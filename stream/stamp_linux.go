//go:build linux && (amd64 || arm64)

package stream

import (
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// kernelStamps reads a TCP connection with recvmsg, taking the kernel's
// receive timestamp (SO_TIMESTAMPNS) of the newest segment each read
// returns. It allocates nothing per read: the message header, the buffer
// for the control message and the function the runtime's poller calls
// are the connection's.
type kernelStamps struct {
	sc  *stampConn
	raw syscall.RawConn
	msg syscall.Msghdr
	iov syscall.Iovec
	oob [64]byte
	do  func(fd uintptr) bool

	// Results of the last recvmsg.
	n     int
	oobn  int
	errno syscall.Errno
}

// newKernelStamps turns on receive timestamps for c; nil when c is not a
// TCP connection or the option cannot be set.
func newKernelStamps(sc *stampConn, c net.Conn) *kernelStamps {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	k := &kernelStamps{sc: sc, raw: raw}
	k.do = k.recvmsg
	return k
}

// recvmsg is called by the runtime's poller with the socket; false asks
// it to wait until the socket is readable and call again.
func (k *kernelStamps) recvmsg(fd uintptr) bool {
	for {
		n, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&k.msg)), 0)
		if e == syscall.EINTR {
			continue
		}
		if e == syscall.EAGAIN {
			return false
		}
		k.n, k.oobn, k.errno = int(n), int(k.msg.Controllen), e
		return true
	}
}

func (k *kernelStamps) read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	k.iov.Base = &p[0]
	k.iov.SetLen(len(p))
	k.msg.Iov = &k.iov
	k.msg.Iovlen = 1
	k.msg.Control = &k.oob[0]
	k.msg.SetControllen(len(k.oob))
	k.n, k.oobn, k.errno = 0, 0, 0
	err := k.raw.Read(k.do)
	now := time.Now()
	k.iov.Base, k.msg.Iov, k.msg.Control = nil, nil, nil // do not keep p
	if err != nil {
		return 0, err // closed, or the deadline passed: as net.Conn says it
	}
	if k.errno != 0 {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: k.sc.LocalAddr(), Addr: k.sc.RemoteAddr(), Err: os.NewSyscallError("recvmsg", k.errno)}
	}
	if k.n == 0 {
		return 0, io.EOF
	}
	lag := time.Duration(0)
	if ts, ok := k.timestamp(); ok {
		if l := time.Duration(now.UnixNano() - ts); l >= 0 && l < maxLag {
			lag = l
		}
	}
	k.sc.note(now, lag)
	return k.n, nil
}

// timestamp returns the SCM_TIMESTAMPNS of the last recvmsg, as Unix ns.
func (k *kernelStamps) timestamp() (int64, bool) {
	b := k.oob[:min(k.oobn, len(k.oob))]
	for len(b) >= syscall.SizeofCmsghdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < syscall.SizeofCmsghdr || l > len(b) {
			return 0, false
		}
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SCM_TIMESTAMPNS && l >= syscall.CmsgLen(int(unsafe.Sizeof(syscall.Timespec{}))) {
			ts := (*syscall.Timespec)(unsafe.Pointer(&b[syscall.CmsgLen(0)]))
			return ts.Nano(), true
		}
		b = b[min(syscall.CmsgSpace(l-syscall.CmsgLen(0)), len(b)):]
	}
	return 0, false
}
