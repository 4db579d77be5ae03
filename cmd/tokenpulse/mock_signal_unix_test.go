//go:build unix

package main

import (
	"bufio"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMockSecondSignalExits starts `tokenpulse mock` as a process with a
// stream running, sends SIGTERM, waits for the graceful shutdown's
// message, and sends SIGTERM again: the mock exits at once with 143
// (128 + SIGTERM), as serve does. It ignored the second signal and
// waited out its 10 s grace, then exited 0.
func TestMockSecondSignalExits(t *testing.T) {
	cmd := exec.Command(os.Args[0], "mock", "--addr", "127.0.0.1:0", "--ttft", "1ms", "--itl", "1s", "--tokens", "600")
	cmd.Env = append(os.Environ(), cliHelper+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := func(r *bufio.Scanner, match *regexp.Regexp) []string {
		for r.Scan() {
			if m := match.FindStringSubmatch(r.Text()); m != nil {
				return m
			}
		}
		t.Fatalf("the mock's output ended before a line matching %v: %v", match, r.Err())
		return nil
	}
	base := lines(bufio.NewScanner(stdout), regexp.MustCompile(`serving on (http://\S+)`))[1]

	// A stream that lasts 10 minutes, running when the signals come.
	resp, err := http.Post(base+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"mock","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}

	errs := bufio.NewScanner(stderr)
	cmd.Process.Signal(syscall.SIGTERM)
	lines(errs, regexp.MustCompile(`shutting down`))
	cmd.Process.Signal(syscall.SIGTERM)
	go func() { // drain, so that the mock never blocks writing
		for errs.Scan() {
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(5 * time.Minute): // a safety bound only
		t.Fatal("the mock did not exit after a second SIGTERM")
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Errorf("exit: %v; want exit status %d", err, 128+int(syscall.SIGTERM))
	}
}
