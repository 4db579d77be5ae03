// Package pgtest gives tests a real PostgreSQL server: one started for the
// test from the system's binaries (Debian's postgresql package,
// /usr/lib/postgresql/*/bin), or the one TOKENPULSE_TEST_POSTGRES names.
//
// Without a server the tests that need one are skipped with a message,
// except under CI=true, where they fail: CI must run them.
//
// Example:
//
//	func TestMain(m *testing.M) { code := m.Run(); pgtest.StopShared(); os.Exit(code) }
//
//	url := pgtest.Database(t) // a fresh, empty database on the shared server
//	srv := pgtest.Start(t)    // a server of the test's own, to stop mid-test
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names a server to use instead of starting one: a postgres:// URL
// of a role that may create databases.
const EnvURL = "TOKENPULSE_TEST_POSTGRES"

// Server is a PostgreSQL server the tests may create databases on.
type Server struct {
	// URL is the server's admin URL (its "postgres" database).
	URL string
	dir string // the data directory's parent, "" for a server not ours
	bin string // the directory of pg_ctl
	mu  sync.Mutex
	up  bool
}

// unavailable skips t, or fails it under CI=true, saying why no server
// could be had.
func unavailable(t testing.TB, why error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and no PostgreSQL server for this test: %v (install the postgresql package or set %s)", why, EnvURL)
	}
	t.Skipf("no PostgreSQL server: %v (install the postgresql package or set %s)", why, EnvURL)
}

// BinDir returns the directory of the newest installed PostgreSQL's
// binaries (initdb, pg_ctl).
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no pg_ctl under /usr/lib/postgresql/*/bin or on PATH")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Start starts a server of t's own, stopped when t ends; t is skipped (or
// fails under CI=true) when no PostgreSQL binaries are installed.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		unavailable(t, err)
	}
	t.Cleanup(func() { s.Stop(); os.RemoveAll(s.dir) })
	return s
}

var shared struct {
	sync.Mutex
	s   *Server
	err error
}

// Shared returns the server of the whole test binary: TOKENPULSE_TEST_POSTGRES
// when set, else one started on first use and stopped by StopShared.
func Shared(t testing.TB) *Server {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.s == nil && shared.err == nil {
		if u := os.Getenv(EnvURL); u != "" {
			shared.s = &Server{URL: u, up: true}
		} else {
			shared.s, shared.err = start()
		}
	}
	if shared.err != nil {
		unavailable(t, shared.err)
	}
	return shared.s
}

// StopShared stops the shared server if this process started it. Call it
// from TestMain after m.Run.
func StopShared() {
	shared.Lock()
	defer shared.Unlock()
	if shared.s != nil && shared.s.dir != "" {
		shared.s.Stop()
		os.RemoveAll(shared.s.dir)
	}
	shared.s = nil
}

// Database returns the URL of a new, empty database on the shared server,
// dropped when t ends.
func Database(t testing.TB) string {
	t.Helper()
	return Shared(t).NewDatabase(t)
}

// NewDatabase creates an empty database on s and returns its URL; it is
// dropped when t ends (if the server is still up).
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	var b [6]byte
	rand.Read(b[:])
	name := "tokenpulse_test_" + hex.EncodeToString(b[:])
	if err := s.admin("CREATE DATABASE " + name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		if s.Up() {
			s.admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		}
	})
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// admin runs one statement on the server's admin database.
func (s *Server) admin(stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, stmt)
	return err
}

// Up reports whether the server runs (a server not ours is taken as up).
func (s *Server) Up() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up
}

// Stop stops a server this package started (fast shutdown: connections
// are cut, as when a database host goes away). It does nothing on a
// server not ours.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir == "" || !s.up {
		return nil
	}
	s.up = false
	out, err := asPostgres(exec.Command(filepath.Join(s.bin, "pg_ctl"), "-D", filepath.Join(s.dir, "data"), "-m", "fast", "-w", "stop")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v: %s", err, out)
	}
	return nil
}

// start runs initdb in a new directory and starts the server on a free
// loopback port, its socket in the same directory.
func start() (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tokenpulse-pg-")
	if err != nil {
		return nil, err
	}
	// The server runs as the postgres user when we are root (PostgreSQL
	// refuses root): it must reach and own its directories.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if err := chownToPostgres(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if out, err := asPostgres(exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", "--no-sync")).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200", port, dir)
	cmd := exec.Command(filepath.Join(bin, "pg_ctl"), "-D", data, "-o", opts, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "start")
	if out, err := asPostgres(cmd).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "log"))
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, log)
	}
	return &Server{URL: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port), dir: dir, bin: bin, up: true}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
