//go:build unix

package adbstub

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func testScript() *Script {
	return &Script{Devices: []Device{{
		Serial:     "stand-in-1",
		Props:      map[string]string{"ro.product.model": "Phone X", "ro.soc.model": "SM8650"},
		MemTotalKB: 1000,
		Zones:      []Zone{{Type: "cpu-0", TempC: []float64{30, 50}, PassiveTripC: 45}},
		BatteryC:   []float64{28.5, 31},
		CPUs:       []CPU{{Governor: "schedutil", HWMaxKHz: 3000000, MaxKHz: []int{3000000, 2000000}}},
	}}}
}

// adb runs the stand-in in this process with env set.
func adb(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return out.String() + errb.String(), code
}

func TestStandIn(t *testing.T) {
	dir := t.TempDir()
	s := testScript()
	s.Root = filepath.Join(dir, "devices")
	if err := s.Write(filepath.Join(dir, "script.json")); err != nil {
		t.Fatal(err)
	}
	env := []string{ScriptEnv + "=" + filepath.Join(dir, "script.json")}

	out, code := adb(t, env, "devices", "-l")
	if code != 0 || !strings.Contains(out, "stand-in-1") || !strings.Contains(out, "model:Phone_X") {
		t.Fatalf("devices -l = %d %q", code, out)
	}
	out, code = adb(t, env, "-s", "stand-in-1", "shell", "getprop", "ro.soc.model")
	if code != 0 || strings.TrimSpace(out) != "SM8650" {
		t.Fatalf("getprop = %d %q", code, out)
	}
	out, _ = adb(t, env, "-s", "stand-in-1", "shell", "cat /proc/meminfo")
	if !strings.Contains(out, "MemTotal:       1000 kB") {
		t.Errorf("meminfo %q", out)
	}
	// Each thermal read sees the next step; the last repeats.
	for i, want := range []string{"30000 285 3000000", "50000 310 2000000", "50000 310 2000000"} {
		out, _ = adb(t, env, "-s", "stand-in-1", "shell", "echo $(cat /sys/class/thermal/thermal_zone0/temp) $(cat /sys/class/power_supply/battery/temp) $(cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq)")
		if strings.TrimSpace(out) != want {
			t.Errorf("read %d = %q, want %q", i, out, want)
		}
	}
	// Push, pull, and the exit status of a command.
	src := filepath.Join(dir, "f.txt")
	os.WriteFile(src, []byte("hello"), 0o644)
	if out, code := adb(t, env, "-s", "stand-in-1", "push", src, "/data/local/tmp/x/"); code != 0 {
		t.Fatalf("push = %d %q", code, out)
	}
	out, _ = adb(t, env, "-s", "stand-in-1", "shell", "cat", "/data/local/tmp/x/f.txt")
	if out != "hello" {
		t.Errorf("pushed file reads %q", out)
	}
	if _, code := adb(t, env, "-s", "stand-in-1", "shell", "exit 7"); code != 7 {
		t.Errorf("exit status %d, want 7", code)
	}
	back := filepath.Join(dir, "back")
	if out, code := adb(t, env, "-s", "stand-in-1", "pull", "/data/local/tmp/x", back); code != 0 {
		t.Fatalf("pull = %d %q", code, out)
	}
	if b, _ := os.ReadFile(filepath.Join(back, "f.txt")); string(b) != "hello" {
		t.Errorf("pulled %q", b)
	}
	// A lost device is gone from the list and refuses commands.
	if err := Lose(s.Root, "stand-in-1"); err != nil {
		t.Fatal(err)
	}
	if out, _ := adb(t, env, "devices", "-l"); strings.Contains(out, "stand-in-1") {
		t.Errorf("a lost device is listed: %q", out)
	}
	if out, code := adb(t, env, "-s", "stand-in-1", "shell", "true"); code == 0 || !strings.Contains(out, "not found") {
		t.Errorf("a lost device answered: %d %q", code, out)
	}
}

// TestStandInRunsARM64 pushes a static linux/arm64 program and runs it
// under qemu-aarch64-static through the stand-in's shell.
func TestStandInRunsARM64(t *testing.T) {
	if _, err := exec.LookPath("qemu-aarch64-static"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("qemu-aarch64-static is not installed")
		}
		t.Skip("qemu-aarch64-static is not installed")
	}
	dir := t.TempDir()
	env, err := Install(dir, testScript())
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(dir, "hello.go")
	os.WriteFile(prog, []byte("package main\nimport (\"fmt\";\"os\";\"runtime\")\nfunc main(){ wd, _ := os.Getwd(); fmt.Println(runtime.GOARCH, len(os.Args), wd != \"\") }\n"), 0o644)
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "hello"), prog)
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	run := func(args ...string) string {
		cmd := exec.Command(filepath.Join(dir, "adb"), args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("adb %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("push", filepath.Join(dir, "hello"), "/data/local/tmp/tp/hello")
	if out := run("shell", "cd /data/local/tmp/tp && chmod 700 hello && ./hello a b"); strings.TrimSpace(out) != "arm64 3 true" {
		t.Errorf("the arm64 program said %q", out)
	}
	run("pull", "/data/local/tmp/tp/hello", filepath.Join(dir, "pulled"))
	a, _ := os.ReadFile(filepath.Join(dir, "hello"))
	b, _ := os.ReadFile(filepath.Join(dir, "pulled"))
	if !bytes.Equal(a, b) {
		t.Errorf("pull gave back %d bytes, not the %d pushed", len(b), len(a))
	}
}
