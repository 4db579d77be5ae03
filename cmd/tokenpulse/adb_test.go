//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/tokenpulse/tokenpulse/internal/adbstub"
	"github.com/tokenpulse/tokenpulse/internal/android"
	"github.com/tokenpulse/tokenpulse/internal/mock"
	"github.com/tokenpulse/tokenpulse/runfile"
)

// standInDevice is a phone of the stand-in: an SM8650 whose zone rises
// from 36 °C by rise degrees per heat reading, under a passive trip point
// of 50 °C.
func standInDevice(serial string, rise float64) adbstub.Device {
	temps := []float64{36}
	for i := 1; i < 6; i++ {
		temps = append(temps, 36+rise*float64(i))
	}
	return adbstub.Device{
		Serial: serial, MemTotalKB: 11_700_000,
		Props: map[string]string{
			"ro.product.manufacturer": "samsung", "ro.product.model": "SM-S928B", "ro.product.name": "e3qxeea",
			"ro.build.version.release": "14", "ro.build.version.sdk": "34",
			"ro.build.fingerprint": "samsung/e3qxeea/e3q:14/UP1A.231005.007/S928BXXU1AWM9:user/release-keys",
			"ro.soc.manufacturer":  "QTI", "ro.soc.model": "SM8650", "ro.board.platform": "pineapple",
			"ro.product.cpu.abi": "arm64-v8a",
		},
		Zones:    []adbstub.Zone{{Type: "cpu-1-0-0", TempC: temps, PassiveTripC: 50}, {Type: "skin", TempC: []float64{31}}},
		BatteryC: []float64{30.5},
		CPUs:     []adbstub.CPU{{Governor: "schedutil", HWMaxKHz: 3_300_000, CurKHz: []int{300_000, 3_300_000}}},
	}
}

// needEmulation fails the test under CI, and skips it elsewhere, when
// the tools a device run through the stand-in needs are missing.
func needEmulation(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"qemu-aarch64-static", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed (.ci/run installs qemu-user-static)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// arm64Tokenpulse builds the static linux/arm64 tokenpulse a device run
// pushes, as the docs say to build it.
func arm64Tokenpulse(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tokenpulse-linux-arm64")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the arm64 tokenpulse: %v\n%s", err, out)
	}
	return bin
}

// installStandIn puts the stand-in adb with devices first on PATH.
func installStandIn(t *testing.T, devices ...adbstub.Device) *adbstub.Script {
	t.Helper()
	s := &adbstub.Script{Devices: devices}
	env, err := adbstub.Install(t.TempDir(), s)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	return s
}

// labTiers is a tiers file of one's own: the stand-in's SoC in a tier
// whose limits an emulated phone meets.
func labTiers(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tiers.yaml")
	if err := os.WriteFile(p, []byte("tiers:\n  - name: lab\n    thresholds: [ttft.p95 <= 60s]\n    socs: [SM8650]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBenchOnDevice runs bench --adb through the stand-in device with
// the real static linux/arm64 tokenpulse and the bundled model, under
// qemu-aarch64-static (about ten times slower than the host: the runs
// are tiny).
func TestBenchOnDevice(t *testing.T) {
	needEmulation(t)
	bin := arm64Tokenpulse(t)

	t.Run("end-to-end", func(t *testing.T) {
		installStandIn(t, standInDevice("R5CX1", 0))
		out, history := t.TempDir(), filepath.Join(t.TempDir(), "history.db")
		text, code := cliRun(t, "bench", "--adb", "R5CX1", "--adb-binary", bin, "--suite", writeBenchSuite(t, "30s"),
			"--tiers", labTiers(t), "-n", "2", "--warmup", "0", "--max-tokens", "6", "--out", out, "--history", history)
		if code != exitOK {
			t.Fatalf("exit %d, want 0:\n%s", code, text)
		}
		run, err := runfile.Load(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		a := run.Device.Android
		if a == nil {
			t.Fatalf("run.json has no android device block: %+v", run.Device)
		}
		if a.Serial != "R5CX1" || a.Model != "SM-S928B" || a.SoC != "QTI SM8650" || a.Tier != "lab" || !strings.HasPrefix(a.Fingerprint, "samsung/e3qxeea") || a.AndroidVersion != "14" {
			t.Errorf("android block %+v", a)
		}
		if run.Device.Tier != "lab" || run.Device.Hostname != "R5CX1" || run.Device.Label != "samsung SM-S928B (QTI SM8650) / Android 14" || run.Device.Arch != "arm64" {
			t.Errorf("device block %+v", run.Device)
		}
		if a.HeatBefore == nil || a.HeatAfter == nil || a.HeatBefore.BatteryC == nil || *a.HeatBefore.BatteryC != 30.5 || len(a.HeatAfter.Zones) != 2 {
			t.Errorf("heat before %+v after %+v", a.HeatBefore, a.HeatAfter)
		}
		if len(a.HeatBefore.CPUs) != 1 || a.HeatBefore.CPUs[0].Governor != "schedutil" || a.HeatBefore.CPUs[0].HWMaxKHz != 3_300_000 {
			t.Errorf("cpus %+v", a.HeatBefore.CPUs)
		}
		if a.Throttled || strings.Contains(text, "throttled") {
			t.Errorf("a cool device was said to throttle:\n%s", text)
		}
		// The engine ran on the "phone": arm64, with its NEON kernels.
		if !strings.Contains(run.Target.Kernels, "neon") || run.Target.Backend != "embedded" {
			t.Errorf("target %+v: want the embedded engine's NEON kernels", run.Target)
		}
		if run.Summary.Overall.Requests != 2 || run.Interrupted {
			t.Errorf("%d warm requests, interrupted %v", run.Summary.Overall.Requests, run.Interrupted)
		}
		for _, r := range run.Requests {
			if !r.OK() || r.OutputTokens == 0 {
				t.Errorf("request %d: %q, %d tokens", r.Index, r.Error, r.OutputTokens)
			}
		}
		var tierJudged bool
		for _, v := range run.Verdicts {
			tierJudged = tierJudged || (v.Metric == "ttft" && v.Limit == 60000)
		}
		if !tierJudged {
			t.Errorf("the SoC's tier (lab) was not judged: %+v", run.Verdicts)
		}
		if !strings.Contains(text, "recorded as run 1") {
			t.Errorf("the run was not recorded in the history:\n%s", text)
		}
		if _, err := os.Stat(filepath.Join(out, adbPointerFile)); err == nil {
			t.Errorf("a finished run keeps its pointer to the device")
		}
		rep, code := cliRun(t, "report", out)
		if code != exitOK || !strings.Contains(rep, "samsung SM-S928B (QTI SM8650) / Android 14") || !strings.Contains(rep, "heat    battery 30.5 °C") {
			t.Errorf("report: exit %d\n%s", code, rep)
		}
	})

	t.Run("throttling", func(t *testing.T) {
		// 36 °C, then 8 °C more at each reading: past the 50 °C trip
		// point by the second one after the start.
		installStandIn(t, standInDevice("HOT1", 8))
		// A threshold no emulated phone meets, so that the run alerts.
		var alert []byte
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			alert, _ = io.ReadAll(r.Body)
		}))
		defer hook.Close()
		out := t.TempDir()
		text, code := cliRun(t, "bench", "--adb", "HOT1", "--adb-binary", bin, "--suite", writeBenchSuite(t, "30s"),
			"--tiers", labTiers(t), "-n", "2", "--warmup", "0", "--max-tokens", "6", "--out", out, "--no-history",
			"--threshold", "ttft.p50 < 1us", "--alert-webhook", hook.URL)
		if code != exitThreshold {
			t.Fatalf("exit %d, want 99 (the 1us threshold):\n%s", code, text)
		}
		run, err := runfile.Load(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !run.Device.Android.Throttled {
			t.Errorf("a device past its trip point is not marked throttled; heat after %+v", run.Device.Android.HeatAfter)
		}
		var warned bool
		for _, w := range run.Warnings {
			warned = warned || strings.Contains(w, "the device throttled during the run") && strings.Contains(w, "passive trip point 50.0 °C")
		}
		if !warned || !strings.Contains(text, "warning: the device throttled during the run") {
			t.Errorf("no throttling warning: %q\n%s", run.Warnings, text)
		}
		// The alert names the device, its firmware, its tier and its heat.
		for _, want := range []string{"samsung SM-S928B (QTI SM8650) / Android 14", "UP1A.231005.007/S928BXXU1AWM9", `"tier": "lab"`, "throttled during the run: battery 30.5"} {
			if !bytes.Contains(alert, []byte(want)) {
				t.Errorf("the alert lacks %q:\n%s", want, alert)
			}
		}
	})

	t.Run("client-of-url", func(t *testing.T) {
		// The phone as the client of an endpoint (here the host's mock,
		// which the stand-in reaches on loopback), with an API key.
		s := installStandIn(t, standInDevice("CLI1", 0))
		url := startMock(t, mock.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond, Tokens: 6, TokensPerEvent: 1})
		t.Setenv("OPENAI_API_KEY", "sk-not-on-the-command-line")
		out := t.TempDir()
		text, code := cliRun(t, "bench", "--adb", "CLI1", "--adb-binary", bin, "--url", url, "--suite", writeBenchSuite(t, "30s"),
			"-n", "2", "--warmup", "0", "--out", out, "--no-history")
		if code != exitOK {
			t.Fatalf("exit %d, want 0:\n%s", code, text)
		}
		run, err := runfile.Load(filepath.Join(out, "run.json"))
		if err != nil {
			t.Fatal(err)
		}
		if run.Target.Backend != "mock" || run.Summary.Overall.Requests != 2 || run.Device.Android == nil {
			t.Errorf("target %+v, %d requests, device %+v", run.Target, run.Summary.Overall.Requests, run.Device)
		}
		if strings.Contains(strings.Join(run.CommandLine, " "), "sk-not") {
			t.Errorf("the key is on the device's command line: %q", run.CommandLine)
		}
		left, _ := filepath.Glob(adbstub.Local(s.Root, "CLI1", defaultADBDir+"/files/*/key"))
		if len(left) != 0 {
			t.Errorf("the key file stayed on the device: %q", left)
		}
	})

	t.Run("dns", func(t *testing.T) {
		// Android has no /etc/resolv.conf: a --url by name resolves
		// through --adb-dns, here a DNS server on loopback that knows
		// llm.test.
		installStandIn(t, standInDevice("DNS1", 0))
		url := startMock(t, mock.Profile{TTFT: 5 * time.Millisecond, ITL: time.Millisecond, Tokens: 6, TokensPerEvent: 1})
		named := strings.Replace(url, "127.0.0.1", "llm.test", 1)
		dns, asked := dnsServer(t, "llm.test.")
		out := t.TempDir()
		text, code := cliRun(t, "bench", "--adb", "DNS1", "--adb-binary", bin, "--url", named, "--adb-dns", dns,
			"--suite", writeBenchSuite(t, "30s"), "-n", "1", "--warmup", "0", "--out", out, "--no-history")
		if code != exitOK {
			t.Fatalf("exit %d, want 0:\n%s", code, text)
		}
		if asked.Load() == 0 {
			t.Error("the device never asked the --adb-dns server")
		}
	})

	t.Run("repeat", func(t *testing.T) {
		// Two runs in one process on the device; the zone warms by 8 °C
		// a reading, so the second run starts hotter than the first.
		installStandIn(t, standInDevice("REP1", 8))
		out := t.TempDir()
		text, code := cliRun(t, "bench", "--adb", "REP1", "--adb-binary", bin, "--suite", writeBenchSuite(t, "30s"),
			"--tiers", labTiers(t), "-n", "1", "--warmup", "0", "--max-tokens", "6", "--repeat", "2", "--out", out, "--no-history")
		if code != exitOK {
			t.Fatalf("exit %d, want 0:\n%s", code, text)
		}
		if _, err := os.Stat(filepath.Join(out, "repeats.json")); err != nil || !strings.Contains(text, "repeats written to") {
			t.Fatalf("no repeats file (%v):\n%s", err, text)
		}
		var runs []*runfile.Run
		for _, rep := range []string{"rep-01", "rep-02"} {
			run, err := runfile.Load(filepath.Join(out, rep, "run.json"))
			if err != nil {
				t.Fatal(err)
			}
			if run.Device.Android == nil || run.Device.Android.Serial != "REP1" || run.Device.Android.HeatAfter == nil {
				t.Fatalf("%s: device %+v", rep, run.Device)
			}
			runs = append(runs, run)
		}
		first, second := runs[0].Device.Android, runs[1].Device.Android
		if second.HeatBefore == nil || !second.HeatBefore.At.Equal(first.HeatAfter.At) {
			t.Errorf("the second run's heat before is not the first's after: %+v vs %+v", second.HeatBefore, first.HeatAfter)
		}
		if z, _ := hottestC(second.HeatAfter); z <= 36 {
			t.Errorf("the series' last reading is not the one after it: %v °C", z)
		}
	})

	t.Run("device-lost", func(t *testing.T) {
		s := installStandIn(t, standInDevice("GONE1", 0))
		out := filepath.Join(t.TempDir(), "run")
		// An earlier run's file in --out must not stand for this one.
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := (&runfile.Run{SchemaVersion: 1, Tool: runfile.Tool{Name: "tokenpulse"}}).Write(filepath.Join(out, "run.json")); err != nil {
			t.Fatal(err)
		}
		type result struct {
			text string
			code int
		}
		done := make(chan result, 1)
		go func() {
			text, code := cliRun(t, "bench", "--adb", "GONE1", "--adb-binary", bin, "--suite", writeBenchSuite(t, "30s"),
				"-n", "40", "--warmup", "0", "--max-tokens", "40", "--out", out, "--no-history")
			done <- result{text, code}
		}()
		// Unplug it once the run there has journalled a finished request.
		runs := adbstub.Local(s.Root, "GONE1", defaultADBDir+"/runs")
		var journal string
		for journal == "" || journalLines(journal) < 1+1 {
			select {
			case r := <-done:
				t.Fatalf("the run ended before the device was lost: exit %d\n%s", r.code, r.text)
			case <-time.After(50 * time.Millisecond):
			}
			if m, _ := filepath.Glob(filepath.Join(runs, "run-*", runfile.JournalFile)); len(m) == 1 {
				journal = m[0]
			}
		}
		if err := adbstub.Lose(s.Root, "GONE1"); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.code != exitFailure || !strings.Contains(r.text, "was lost during the run") {
			t.Fatalf("exit %d, want 1 and the device said lost:\n%s", r.code, r.text)
		}
		if _, err := os.Stat(filepath.Join(out, adbPointerFile)); err != nil {
			t.Fatalf("the run directory does not say where the run is: %v", err)
		}
		// While it is gone, report says so.
		if text, code := cliRun(t, "report", out); code != exitFailure || !strings.Contains(text, "not attached") {
			t.Errorf("report of a run on a lost device: exit %d\n%s", code, text)
		}
		if err := adbstub.Replug(s.Root, "GONE1"); err != nil {
			t.Fatal(err)
		}
		text, code := cliRun(t, "report", out)
		if code != exitOK || !strings.Contains(text, "pulled the journal from GONE1") || !strings.Contains(text, "rebuilt the run from its journal") {
			t.Fatalf("report after the device came back: exit %d\n%s", code, text)
		}
		j, err := runfile.ReadJournal(filepath.Join(out, runfile.JournalFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(j.Entries) < 1 || j.Header.Device.Android == nil || j.Header.Device.Android.Serial != "GONE1" || j.Header.Device.Android.HeatBefore == nil {
			t.Errorf("the pulled journal: %d requests, device %+v", len(j.Entries), j.Header.Device)
		}
		if !strings.Contains(text, "samsung SM-S928B") || !bytes.Contains([]byte(text), []byte("interrupted")) {
			t.Errorf("the rebuilt run's report lacks the device or the interruption:\n%s", text)
		}
	})
}

// dnsServer answers A queries for name with 127.0.0.1 (and every other
// query with no answer) on a loopback UDP port; it returns the address
// and the count of queries for name.
func dnsServer(t *testing.T, name string) (string, *atomic.Int64) {
	t.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	asked := &atomic.Int64{}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := conn.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
			b.EnableCompression()
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			if q.Name.String() == name {
				asked.Add(1)
				if q.Type == dnsmessage.TypeA {
					_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}})
				}
			}
			msg, err := b.Finish()
			if err == nil {
				_, _ = conn.WriteTo(msg, from)
			}
		}
	}()
	return conn.LocalAddr().String(), asked
}

// hottestC is the hottest zone's temperature of h.
func hottestC(h *runfile.Heat) (float64, bool) {
	z, ok := android.Hottest(h)
	return z.TempC, ok
}

// TestDevicesLists lists the stand-in's devices with their tiers, and
// says plainly when a SoC has none.
func TestDevicesLists(t *testing.T) {
	other := adbstub.Device{Serial: "P8", Props: map[string]string{"ro.product.manufacturer": "Google", "ro.product.model": "Pixel 8", "ro.soc.model": "Tensor G3", "ro.board.platform": "zuma"}}
	locked := adbstub.Device{Serial: "NEW1", State: "unauthorized"}
	installStandIn(t, standInDevice("R5CX1", 0), other, locked)
	text, code := cliRun(t, "devices")
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, text)
	}
	for _, want := range []string{"R5CX1", "SM-S928B", "QTI SM8650 (pineapple)", "flagship", "11.2 GiB", "P8: no tier: Tensor G3 is in no tier's socs list", "fingerprint samsung/", "NEW1: unauthorized (not usable: accept the USB debugging prompt"} {
		if !strings.Contains(text, want) {
			t.Errorf("devices lacks %q:\n%s", want, text)
		}
	}
	text, code = cliRun(t, "devices", "--json")
	var listed []runfile.Android
	if err := json.Unmarshal([]byte(text), &listed); code != exitOK || err != nil || len(listed) != 2 || listed[0].Tier != "flagship" || listed[1].TierNote == "" {
		t.Errorf("devices --json: exit %d, %v, %+v\n%s", code, err, listed, text)
	}
	text, code = cliRun(t, "devices", "--tiers", labTiers(t))
	if code != exitOK || !strings.Contains(text, " lab") || strings.Contains(text, "flagship") {
		t.Errorf("devices --tiers (SM8650 in lab): exit %d\n%s", code, text)
	}
}

// TestBenchOnDeviceUsage refuses what a device run does not do, before
// anything is pushed.
func TestBenchOnDeviceUsage(t *testing.T) {
	installStandIn(t, standInDevice("R5CX1", 0))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--adb", "R5CX1", "--repeat", "2", "--report", "html"}, exitUsage, "--repeat does not take --report"},
		{[]string{"--adb", "R5CX1", "--shard", "1/2"}, exitUsage, "--shard (shard) is not supported with --adb"},
		{[]string{"--adb", "R5CX1", "--cooldown", "hot"}, exitUsage, "want a battery temperature"},
		{[]string{"--adb", "NOPE"}, exitFailure, "no device NOPE is attached"},
		{[]string{"--adb", "R5CX1", "--model", "/nonexistent/model.gguf"}, exitUsage, "--model: stat /nonexistent/model.gguf"},
		{[]string{"--adb", "R5CX1", "--adb-binary", os.Args[0]}, exitUsage, "not arm64"},
		{[]string{"--adb", "R5CX1", "--url", "http://llm.example:8080"}, exitUsage, "give --adb-dns"},
	} {
		text, code := cliRun(t, append([]string{"bench", "--no-history"}, c.args...)...)
		if code != c.code || !strings.Contains(text, c.want) {
			t.Errorf("bench %q: exit %d, want %d and %q:\n%s", c.args, code, c.code, c.want, text)
		}
	}
}
