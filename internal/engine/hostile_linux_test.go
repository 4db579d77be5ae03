package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestHostileMemory loads the hostile files in a child process whose
// address space is limited (ulimit -v: what it has now plus 1 GiB), so an
// engine that sizes buffers from the file's claims dies there with "fatal
// error: out of memory" rather than here; the engine must instead refuse
// each file with an error naming what is wrong and how much it asked.
func TestHostileMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and loads multi-megabyte files in child processes")
	}
	cases := []struct {
		name string
		spec hostileSpec
		ctx  int
		want []string
	}{
		{"aliased 1024 layers", hostileAliased, 0, []string{"share bytes", "malformed file"}},
		{"65536-wide key", hostileWide, 0, []string{"not enough memory", "would take 1.7 GiB", "KV cache 1.0 GiB", "rope tables 512 MiB", "ulimit -v"}},
		{"ctx beyond context_length", hostileSpec{dim: 32, heads: 1, keyLen: 65536, ffn: 32, layers: 1, ctxLen: 2048}, 1 << 20,
			[]string{"not enough memory", "with a context of 1048576", "KV cache 512 GiB", "rope tables 256 GiB"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hostile.gguf")
			data := hostileGGUF(t, c.spec)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d bytes", c.name, len(data))
			var out []byte
			defer func() { t.Logf("child:\n%s", tail(out, 1500)) }()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostileChild$", "-test.v")
			cmd.Env = append(os.Environ(), "TOKENPULSE_HOSTILE_FILE="+path, "TOKENPULSE_HOSTILE_CTX="+strconv.Itoa(c.ctx))
			var err error
			out, err = cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the child loading the file died (%v):\n%s", err, tail(out, 1500))
			}
			got := string(out)
			if !strings.Contains(got, "LOAD ERROR: ") {
				t.Fatalf("the child loaded the file:\n%s", tail(out, 1500))
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, tail(out, 1500))
				}
			}
		})
	}
}

func tail(b []byte, n int) string {
	return string(b[max(0, len(b)-n):])
}

// TestHostileChild is TestHostileMemory's child: with its address space
// limited, it loads the file, warms it up and generates a token.
func TestHostileChild(t *testing.T) {
	path := os.Getenv("TOKENPULSE_HOSTILE_FILE")
	if path == "" {
		t.Skip("run by TestHostileMemory")
	}
	status, _ := os.ReadFile("/proc/self/status")
	var vm uint64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			kb, _ := strconv.ParseUint(strings.Fields(v)[0], 10, 64)
			vm = kb << 10
		}
	}
	lim := vm + 1<<30
	if err := unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: lim, Max: lim}); err != nil {
		t.Fatal(err)
	}
	ctxLen, _ := strconv.Atoi(os.Getenv("TOKENPULSE_HOSTILE_CTX"))
	m, err := Load(context.Background(), Options{ModelPath: path, Ctx: ctxLen, Threads: 1})
	if err != nil {
		fmt.Printf("LOAD ERROR: %v\n", err)
		return
	}
	defer m.Close()
	if _, err := m.Warmup(context.Background()); err != nil {
		fmt.Printf("WARMUP ERROR: %v\n", err)
		return
	}
	_, err = m.NewSession().Generate(context.Background(), []int32{1}, Params{MaxTokens: 1}, func(Token) error { return nil })
	fmt.Printf("GENERATED: %v\n", err)
}
