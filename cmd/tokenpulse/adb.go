package main

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/bench"
	"github.com/tokenpulse/tokenpulse/internal/android"
	"github.com/tokenpulse/tokenpulse/repeats"
	"github.com/tokenpulse/tokenpulse/runfile"
	"github.com/tokenpulse/tokenpulse/runner"
	"github.com/tokenpulse/tokenpulse/suite"
)

// adbFlags run bench on an Android device over adb (bench --adb), and
// carry what the host tells the tokenpulse it starts there (the hidden
// flags).
type adbFlags struct {
	serial      string
	binary      string
	dir         string
	dns         string
	cooldown    string
	cooldownMax time.Duration

	// Given by the host to the run on the device.
	deviceFacts   string
	progressLines bool
	resolver      string

	facts *runfile.Android // read from deviceFacts
}

// defaultADBDir is the directory on the device a run is made in: the
// shell user's own (not shared storage, which every app may read).
const defaultADBDir = "/data/local/tmp/tokenpulse"

// adbPointerFile, in a local run directory, names the device and the
// directory there of a run whose files are still on the device.
const adbPointerFile = "adb.json"

func (a *adbFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&a.serial, "adb", "", "run on the Android device with this serial (tokenpulse devices lists them): push a static linux/arm64 tokenpulse and the model there, measure there (the embedded engine on the phone, or the phone as the client of --url), and pull the run back")
	fl.StringVar(&a.binary, "adb-binary", "", "with --adb, the arm64 tokenpulse to push (default: build one with go build, CGO_ENABLED=0 GOOS=linux GOARCH=arm64)")
	fl.StringVar(&a.dir, "adb-dir", defaultADBDir, "with --adb, the directory on the device the run is made in")
	fl.StringVar(&a.dns, "adb-dns", "", "with --adb and a --url by name, the DNS server the device resolves it with (default: the device's net.dns1; Android has no /etc/resolv.conf for a static binary to read)")
	fl.StringVar(&a.cooldown, "cooldown", "", "with --adb, before the run wait for the device to cool: a battery temperature (38C: at or below 38 °C) or a time (2m)")
	fl.DurationVar(&a.cooldownMax, "cooldown-max", 15*time.Minute, "with --cooldown TEMPERATURE, start anyway after this long")
	fl.StringVar(&a.deviceFacts, "device-facts", "", "the device facts (JSON) the host read over adb, for the run's device block")
	fl.BoolVar(&a.progressLines, "progress-lines", false, "print progress as lines (for the host that streams them back)")
	fl.StringVar(&a.resolver, "resolver", "", "resolve names through this DNS server (host or host:port)")
	for _, name := range []string{"device-facts", "progress-lines", "resolver"} {
		_ = fl.MarkHidden(name)
	}
}

// onDevice prepares the run of a tokenpulse the host started on a device:
// its device facts, and its resolver.
func (a *adbFlags) onDevice() error {
	if a.deviceFacts != "" {
		b, err := os.ReadFile(a.deviceFacts)
		if err != nil {
			return fmt.Errorf("--device-facts: %w", err)
		}
		a.facts = &runfile.Android{}
		if err := json.Unmarshal(b, a.facts); err != nil {
			return fmt.Errorf("--device-facts: %w", err)
		}
	}
	if a.resolver != "" {
		addr := a.resolver
		if _, _, err := net.SplitHostPort(addr); err != nil {
			addr = net.JoinHostPort(addr, "53")
		}
		net.DefaultResolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}}
	}
	return nil
}

// hostOnlyFlags are bench's flags the host acts on and the device's run
// is not given.
var hostOnlyFlags = map[string]bool{
	"adb": true, "adb-binary": true, "adb-dir": true, "adb-dns": true, "cooldown": true, "cooldown-max": true,
	"out": true, "quiet": true, "device-facts": true, "progress-lines": true, "resolver": true,
}

// fileFlags are bench's flags naming a local file, pushed to the device.
var fileFlags = map[string]bool{"model": true, "suite": true, "tokenizer": true, "tiers": true, "experience": true, "trace": true}

// checkPushedFiles checks that the files the flags name, which are
// pushed to the device, are there to push.
func checkPushedFiles(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(fl *pflag.Flag) {
		v := fl.Value.String()
		if err != nil || !fileFlags[fl.Name] || v == "" || (fl.Name == "suite" && !suite.IsFile(v)) {
			return
		}
		if fi, serr := os.Stat(v); serr != nil {
			err = fmt.Errorf("--%s: %w", fl.Name, serr)
		} else if fi.IsDir() {
			err = fmt.Errorf("--%s: %s is a directory", fl.Name, v)
		}
	})
	return err
}

// namesOf returns the flags register adds (give it a fresh value's
// register: registering sets the flags' defaults into their fields).
func namesOf(register func(*pflag.FlagSet)) map[string]bool {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	register(fs)
	names := map[string]bool{}
	fs.VisitAll(func(fl *pflag.Flag) { names[fl.Name] = true })
	return names
}

// deviceRun is one bench --adb run being made.
type deviceRun struct {
	f      *benchFlags
	adb    *android.ADB
	stderr io.Writer
	facts  *runfile.Android
	remote string // the run directory on the device
	local  string // the run directory here

	mu      sync.Mutex
	samples []runfile.Heat
	// rep is the run of a --repeat series the device is making (from 0),
	// and repOf the run each sample was read during.
	rep   int
	repOf []int
}

// runOnDevice is bench --adb: the run is made on the device and its run
// file pulled back here, where history, reports and alerts treat it as
// any other.
func runOnDevice(cmd *cobra.Command, f *benchFlags) error {
	fs := cmd.Flags()
	if f.repeat > 1 {
		if err := checkRepeatFlags(fs); err != nil {
			return err
		}
	}
	for name, set := range map[string]map[string]bool{
		"A/B": namesOf((&abFlags{}).register), "browser": namesOf((&browserFlags{}).register),
		"shard": namesOf((&shardFlags{}).register), "profile": namesOf((&profileFlags{}).register),
	} {
		for fl := range set {
			if fs.Changed(fl) {
				return usageErr(fmt.Errorf("--%s (%s) is not supported with --adb", fl, name))
			}
		}
	}
	var cool android.CooldownSpec
	if f.adb.cooldown != "" {
		var err error
		if cool, err = android.ParseCooldown(f.adb.cooldown); err != nil {
			return usageErr(err)
		}
	}
	plan, err := planBench(fs, f, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	plan.close()
	if err := checkPushedFiles(fs); err != nil {
		return usageErr(err)
	}
	tiers, err := loadTiers(f.judge.tiersFile)
	if err != nil {
		return usageErr(err)
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stderr := cmd.ErrOrStderr()
	r := &deviceRun{f: f, adb: &android.ADB{Serial: f.adb.serial}, stderr: stderr}
	if !r.adb.Online(ctx) {
		return withCode(exitFailure, fmt.Errorf("no device %s is attached and ready (tokenpulse devices lists those that are)", f.adb.serial))
	}
	if r.facts, err = android.Describe(ctx, r.adb, tiers); err != nil {
		return withCode(exitFailure, err)
	}
	r.logf("on %s: %s, %s", f.adb.serial, android.Label(r.facts), android.OS(r.facts))
	if r.facts.TierNote != "" && f.judge.tier == "" {
		r.logf("%s", r.facts.TierNote)
	}
	resolver, err := r.resolver(ctx)
	if err != nil {
		return err
	}
	bin, cleanup, err := deviceBinary(ctx, f.adb.binary, stderr, f.quiet)
	if err != nil {
		return err
	}
	defer cleanup()
	if f.adb.cooldown != "" {
		if r.facts.Cooldown, err = android.Cooldown(ctx, r.adb, cool, f.adb.cooldownMax, android.RealClock{}, func(s string) { r.logf("%s", s) }); err != nil {
			return withCode(exitFailure, fmt.Errorf("--cooldown: %w", err))
		}
	}
	if r.facts.HeatBefore, err = android.ReadHeat(ctx, r.adb, time.Now()); err != nil {
		return withCode(exitFailure, err)
	}
	r.logf("heat before: %s", android.Summary(r.facts.HeatBefore))

	started := time.Now()
	if r.local, err = runner.MakeDir(f.out, started); err != nil {
		return withCode(exitFailure, fmt.Errorf("run directory: %w", err))
	}
	// A run file or journal left in --out by an earlier run would stand
	// for this one should the device be lost (see pullFromDevice); this
	// run writes both anew, as bench does.
	for _, stale := range []string{runFileName, runfile.JournalFile} {
		if err := os.Remove(filepath.Join(r.local, stale)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return withCode(exitFailure, err)
		}
	}
	name := "run-" + started.UTC().Format("20060102-150405.000")
	r.remote = path.Join(f.adb.dir, "runs", name)
	r.facts.Dir = r.remote
	line, err := r.prepare(ctx, fs, bin, name, resolver)
	if err != nil {
		return withCode(exitFailure, err)
	}
	if err := writePointer(r.local, pointer{Serial: f.adb.serial, Dir: r.remote}); err != nil {
		return withCode(exitFailure, err)
	}
	code, runErr := r.execute(ctx, line)
	signalled := ctx.Err() != nil
	if code == exitUsage {
		return usageErr(fmt.Errorf("the tokenpulse on %s refused its flags (its message is above, after \"device:\"); is --adb-binary the same version as this tokenpulse (%s)?", f.adb.serial, toolInfo().Version))
	}
	stop()
	ctx = context.WithoutCancel(ctx)
	if f.repeat > 1 {
		dirs, runs, err := r.collectRepeats(ctx)
		if err != nil {
			if runErr != nil {
				err = fmt.Errorf("%w (%v)", err, runErr)
			}
			return withCode(exitFailure, err)
		}
		if code == 0 || code == exitThreshold {
			runErr = nil
		}
		res, err := repeats.Collect(r.local, dirs, runs, runErr)
		if err != nil {
			return withCode(exitFailure, err)
		}
		return repeatsExit(cmd, res, signalled || code == 130)
	}
	run, err := r.collect(ctx)
	if err != nil {
		if runErr != nil {
			err = fmt.Errorf("%w (%v)", err, runErr)
		}
		return withCode(exitFailure, err)
	}
	if run.Interrupted && runErr == nil {
		runErr = fmt.Errorf("the run on %s stopped early (%s)", f.adb.serial, run.StopReason)
	}
	return deliverRun(ctx, cmd, f, run, r.local, runErr, signalled || code == 130)
}

func (r *deviceRun) logf(format string, args ...any) {
	if !r.f.quiet {
		fmt.Fprintf(r.stderr, "tokenpulse: "+format+"\n", args...)
	}
}

// resolver returns the DNS server the device's run resolves --url's host
// with: none for an address or no --url, --adb-dns, else net.dns1.
func (r *deviceRun) resolver(ctx context.Context) (string, error) {
	if r.f.url == "" {
		return "", nil
	}
	u, err := url.Parse(r.f.url)
	if err != nil {
		return "", usageErr(fmt.Errorf("--url: %w", err))
	}
	if host := u.Hostname(); host == "" || host == "localhost" || net.ParseIP(host) != nil {
		return "", nil
	}
	if r.f.adb.dns != "" {
		return r.f.adb.dns, nil
	}
	out, err := r.adb.Shell(ctx, "getprop net.dns1")
	if dns := strings.TrimSpace(out); err == nil && dns != "" {
		return dns, nil
	}
	return "", usageErr(fmt.Errorf("--url names the host %s, but the device's DNS server is not readable (net.dns1 is empty on Android 8 and later, and a static binary finds no /etc/resolv.conf there): give --adb-dns ADDRESS, or an IP address in --url", u.Hostname()))
}

// prepare pushes the binary, the files the flags name and the device
// facts, and returns the shell line that starts the run on the device.
func (r *deviceRun) prepare(ctx context.Context, fs *pflag.FlagSet, bin, name, resolver string) (string, error) {
	dir := r.f.adb.dir
	files := path.Join(dir, "files", name)
	if _, err := r.adb.Shell(ctx, "mkdir -p "+android.Quote(path.Join(dir, "runs"))+" "+android.Quote(files)+" && chmod 700 "+android.Quote(dir)); err != nil {
		return "", err
	}
	r.logf("pushing %s to %s", bin, r.f.adb.serial)
	remoteBin := path.Join(dir, "tokenpulse")
	if err := r.adb.Push(ctx, bin, remoteBin); err != nil {
		return "", err
	}
	if _, err := r.adb.Shell(ctx, "chmod 700 "+android.Quote(remoteBin)); err != nil {
		return "", err
	}
	outputs := namesOf((&outputFlags{}).register)
	args := []string{"bench"}
	var pushErr error
	fs.Visit(func(fl *pflag.Flag) {
		if hostOnlyFlags[fl.Name] || outputs[fl.Name] || pushErr != nil {
			return
		}
		values := []string{fl.Value.String()}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		}
		for _, v := range values {
			if fileFlags[fl.Name] && v != "" && !(fl.Name == "suite" && !suite.IsFile(v)) {
				dst := path.Join(files, fl.Name+"-"+filepath.Base(v))
				r.logf("pushing %s", v)
				if pushErr = r.adb.Push(ctx, v, dst); pushErr != nil {
					return
				}
				v = dst
			}
			args = append(args, "--"+fl.Name+"="+v)
		}
	})
	if pushErr != nil {
		return "", pushErr
	}
	if r.f.judge.tier == "" && r.facts.Tier != "" {
		args = append(args, "--tier="+r.facts.Tier)
	}
	facts, err := json.Marshal(r.facts)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp("", "tokenpulse-facts-*.json")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(facts); err != nil {
		return "", err
	}
	tmp.Close()
	factsRemote := path.Join(files, "device-facts.json")
	if err := r.adb.Push(ctx, tmp.Name(), factsRemote); err != nil {
		return "", err
	}
	args = append(args, "--out="+r.remote, "--device-facts="+factsRemote, "--progress-lines", "--no-history")
	if resolver != "" {
		args = append(args, "--resolver="+resolver)
	}
	env := ""
	if key := os.Getenv(r.f.apiKeyEnv); key != "" {
		// The key goes in a file only the shell user reads, not on a
		// command line every process on the device can list.
		tmpKey, err := os.CreateTemp("", "tokenpulse-key-*")
		if err != nil {
			return "", err
		}
		defer os.Remove(tmpKey.Name())
		tmpKey.WriteString(key)
		tmpKey.Close()
		keyRemote := path.Join(files, "key")
		if err := r.adb.Push(ctx, tmpKey.Name(), keyRemote); err != nil {
			return "", err
		}
		env = fmt.Sprintf("chmod 600 %s && export %s=\"$(cat %s)\" && rm -f %s && ", android.Quote(keyRemote), r.f.apiKeyEnv, android.Quote(keyRemote), android.Quote(keyRemote))
	}
	return "cd " + android.Quote(dir) + " && " + env + "echo \"pid $$\" >&2 && exec ./tokenpulse " + android.QuoteAll(args), nil
}

// execute runs line on the device, streaming its progress back, and
// returns its exit status. A Ctrl-C here interrupts the run there, which
// then writes what it measured.
func (r *deviceRun) execute(ctx context.Context, line string) (int, error) {
	cmd := r.adb.Command(context.WithoutCancel(ctx), "shell", line)
	cmd.Stdout = io.Discard // the summary is printed here, from the pulled run file
	detach(cmd)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	prog := newProgressLine(r.stderr, r.f.quiet)
	var pid string
	sample := make(chan struct{}, 1)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for range sample {
			if h, err := android.ReadHeat(context.WithoutCancel(ctx), r.adb, time.Now()); err == nil {
				r.mu.Lock()
				r.samples = append(r.samples, *h)
				r.repOf = append(r.repOf, r.rep)
				r.mu.Unlock()
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			if pid != "" {
				_, _ = r.adb.Shell(context.Background(), "kill -INT "+pid)
			}
		case <-done:
		}
	}()
	sc := bufio.NewScanner(errPipe)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		text := sc.Text()
		if p, ok := strings.CutPrefix(text, "pid "); ok && pid == "" {
			pid = strings.TrimSpace(p)
			continue
		}
		var rep, reps int
		if n, _ := fmt.Sscanf(text, "tokenpulse: run %d/%d", &rep, &reps); n == 2 && rep >= 1 {
			r.mu.Lock()
			r.rep = rep - 1
			r.mu.Unlock()
		}
		if pr, ok := parseProgressLine(text); ok {
			prog.update(pr)
			select {
			case sample <- struct{}{}: // a heat reading as requests finish, one at a time
			default:
			}
			continue
		}
		if r.f.quiet && !strings.Contains(text, "warning") && !strings.Contains(text, "error") {
			continue
		}
		prog.finish()
		fmt.Fprintln(r.stderr, "device:", text)
	}
	prog.finish()
	err = cmd.Wait()
	close(done)
	close(sample)
	<-sampled
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), fmt.Errorf("the run on %s ended with status %d", r.adb.Serial, ee.ExitCode())
	}
	return 0, err
}

// collect pulls the run directory back (the run file, or its journal
// when the run did not finish) and adds the heat read here: the readings
// during the run, the one after, and the throttling warnings. A device
// that is gone leaves the run there; the pointer file says where.
func (r *deviceRun) collect(ctx context.Context) (*runfile.Run, error) {
	if err := r.pullRunDir(ctx); err != nil {
		if !r.adb.Online(ctx) {
			return nil, fmt.Errorf("the device %s was lost during the run: what it measured stays in its journal there (%s); once it is back, tokenpulse report %s pulls and rebuilds the run", r.adb.Serial, path.Join(r.remote, runfile.JournalFile), r.local)
		}
		return nil, err
	}
	runPath := filepath.Join(r.local, runFileName)
	if _, err := os.Stat(runPath); err == nil {
		run, err := runfile.Load(runPath)
		if err != nil {
			return nil, err
		}
		return r.finishHeat(ctx, run)
	}
	// The run on the device died without its run file: rebuild it from
	// the journal.
	j, err := runfile.ReadJournal(filepath.Join(r.local, runfile.JournalFile))
	if err != nil {
		return nil, fmt.Errorf("the run on %s wrote neither %s nor a journal: %w", r.adb.Serial, runFileName, err)
	}
	run, err := runner.Rebuild(j)
	if err != nil {
		return nil, err
	}
	r.logf("the run on %s ended without its run file: rebuilt it from its journal (%d finished requests, marked interrupted)", r.adb.Serial, len(run.Requests))
	return r.finishHeat(ctx, run)
}

// pullRunDir pulls every file of the run directory on the device.
func (r *deviceRun) pullRunDir(ctx context.Context) error {
	out, err := r.adb.Shell(ctx, "ls "+android.Quote(r.remote))
	if err != nil {
		return err
	}
	for _, name := range strings.Fields(out) {
		if err := r.adb.Pull(ctx, path.Join(r.remote, name), filepath.Join(r.local, name)); err != nil {
			return err
		}
	}
	return nil
}

// finishHeat adds the heat after the run and the readings during it to
// run, warns when the device throttled, and writes the run file here.
func (r *deviceRun) finishHeat(ctx context.Context, run *runfile.Run) (*runfile.Run, error) {
	r.mu.Lock()
	during := append([]runfile.Heat(nil), r.samples...)
	r.mu.Unlock()
	if err := r.applyHeat(run, nil, during, r.readAfter(ctx), r.local); err != nil {
		return nil, err
	}
	r.done()
	return run, nil
}

// readAfter reads the heat after the run, nil when it cannot.
func (r *deviceRun) readAfter(ctx context.Context) *runfile.Heat {
	h, err := android.ReadHeat(ctx, r.adb, time.Now())
	if err != nil {
		return nil
	}
	r.logf("heat after: %s", android.Summary(h))
	return h
}

// done removes what a run that came back no longer needs: the pointer to
// the device, and a journal the run file replaces.
func (r *deviceRun) done() {
	_ = os.Remove(filepath.Join(r.local, adbPointerFile))
	_ = os.Remove(filepath.Join(r.local, runfile.JournalFile))
}

// applyHeat records the heat of run (before, when not nil, replaces the
// reading the device run started with), warns when the device throttled,
// and writes the run file into dir.
func (r *deviceRun) applyHeat(run *runfile.Run, before *runfile.Heat, during []runfile.Heat, after *runfile.Heat, dir string) error {
	if run.Device.Android == nil {
		facts := *r.facts
		run.Device.Android = &facts
	}
	a := run.Device.Android
	if before != nil {
		a.HeatBefore = before
	}
	a.Heat = append(a.Heat, during...)
	a.HeatAfter = after
	seen := append([]runfile.Heat(nil), a.Heat...)
	if after != nil {
		seen = append(seen, *after)
	}
	verdict := android.Throttling(a.HeatBefore, seen)
	a.Throttled = verdict.Throttled != ""
	for _, w := range verdict.Warnings() {
		where := ""
		if dir != r.local {
			where = filepath.Base(dir) + ": "
		}
		fmt.Fprintf(r.stderr, "tokenpulse: warning: %s%s\n", where, w)
		run.Warnings = append(run.Warnings, w)
	}
	return runner.Write(run, dir)
}

// collectRepeats pulls the runs of a --repeat series back (rep-NN) and
// gives each the heat read during it: its first reading before is the
// last one of the run before it, the series' after is the last run's.
func (r *deviceRun) collectRepeats(ctx context.Context) ([]string, []*runfile.Run, error) {
	if err := r.pullRunDir(ctx); err != nil {
		if !r.adb.Online(ctx) {
			return nil, nil, fmt.Errorf("the device %s was lost during the runs: what they measured stays there (%s, one directory per run: tokenpulse report rebuilds each from its journal once pulled with adb pull)", r.adb.Serial, r.remote)
		}
		return nil, nil, err
	}
	reps, _ := filepath.Glob(filepath.Join(r.local, "rep-*"))
	sort.Strings(reps)
	after := r.readAfter(ctx)
	r.mu.Lock()
	samples, repOf := append([]runfile.Heat(nil), r.samples...), append([]int(nil), r.repOf...)
	r.mu.Unlock()
	var dirs []string
	var runs []*runfile.Run
	var last *runfile.Heat
	for i, dir := range reps {
		run, err := loadOrRebuild(dir)
		if err != nil {
			return nil, nil, err
		}
		var during []runfile.Heat
		for k, h := range samples {
			if repOf[k] == i {
				during = append(during, h)
			}
		}
		var end *runfile.Heat
		if i == len(reps)-1 {
			end = after
		} else if len(during) > 0 {
			end = &during[len(during)-1]
			during = during[:len(during)-1]
		}
		if err := r.applyHeat(run, last, during, end, dir); err != nil {
			return nil, nil, err
		}
		last = end
		dirs, runs = append(dirs, filepath.Base(dir)), append(runs, run)
	}
	if len(runs) == 0 {
		return nil, nil, fmt.Errorf("the runs on %s wrote no run directory (rep-01, ...)", r.adb.Serial)
	}
	r.done()
	return dirs, runs, nil
}

// loadOrRebuild reads the run file of dir, or rebuilds the run from its
// journal when the run did not finish.
func loadOrRebuild(dir string) (*runfile.Run, error) {
	if run, err := runfile.Load(filepath.Join(dir, runFileName)); err == nil || !errors.Is(err, os.ErrNotExist) {
		return run, err
	}
	j, err := runfile.ReadJournal(filepath.Join(dir, runfile.JournalFile))
	if err != nil {
		return nil, err
	}
	return runner.Rebuild(j)
}

// parseProgressLine reads a line progressLine writes in lines mode.
func parseProgressLine(s string) (p bench.Progress, ok bool) {
	n, err := fmt.Sscanf(s, "progress %s %d/%d requests %d errors ttft_p50_ms %f", &p.Phase, &p.Done, &p.Total, &p.Errors, &p.TTFTP50Ms)
	return p, err == nil && n == 5
}

// pointer is adb.json: where on which device a run's files are.
type pointer struct {
	Serial string `json:"serial"`
	Dir    string `json:"dir"`
}

func writePointer(dir string, p pointer) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, adbPointerFile), append(b, '\n'), 0o644)
}

// pullFromDevice fetches the run of a local run directory that a lost
// device kept (see adbPointerFile): its run file when the run there
// finished, else its journal. A directory without a pointer, or with a
// run file already, is left alone.
func pullFromDevice(ctx context.Context, dir string, stderr io.Writer) error {
	b, err := os.ReadFile(filepath.Join(dir, adbPointerFile))
	if err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, runFileName)); err == nil {
		return nil
	}
	var p pointer
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, adbPointerFile), err)
	}
	a := &android.ADB{Serial: p.Serial}
	if !a.Online(ctx) {
		if _, err := os.Stat(filepath.Join(dir, runfile.JournalFile)); err == nil {
			return nil // pulled before
		}
		return fmt.Errorf("the run is still on the device %s (%s), which is not attached: connect it and run this again", p.Serial, p.Dir)
	}
	if err := a.Pull(ctx, path.Join(p.Dir, runFileName), filepath.Join(dir, runFileName)); err == nil {
		fmt.Fprintf(stderr, "tokenpulse: pulled %s from %s:%s\n", runFileName, p.Serial, p.Dir)
		return nil
	}
	if err := a.Pull(ctx, path.Join(p.Dir, runfile.JournalFile), filepath.Join(dir, runfile.JournalFile)); err != nil {
		return fmt.Errorf("neither %s nor its journal is on %s at %s: %w", runFileName, p.Serial, p.Dir, err)
	}
	fmt.Fprintf(stderr, "tokenpulse: pulled the journal from %s:%s\n", p.Serial, p.Dir)
	return nil
}

// deviceBinary returns the arm64 tokenpulse to push: given, this one when
// it is a static linux/arm64 build, else one go build makes; cleanup
// removes a built one.
func deviceBinary(ctx context.Context, given string, stderr io.Writer, quiet bool) (string, func(), error) {
	none := func() {}
	if given != "" {
		if err := checkDeviceBinary(given); err != nil {
			return "", none, usageErr(fmt.Errorf("--adb-binary: %w", err))
		}
		return given, none, nil
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "arm64" {
		if self, err := os.Executable(); err == nil && checkDeviceBinary(self) == nil {
			return self, none, nil
		}
	}
	tmp, err := os.MkdirTemp("", "tokenpulse-arm64-")
	if err != nil {
		return "", none, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	out := filepath.Join(tmp, "tokenpulse")
	if !quiet {
		fmt.Fprintln(stderr, "tokenpulse: building a static linux/arm64 tokenpulse (CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build) ...")
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/tokenpulse/tokenpulse/cmd/tokenpulse")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if msg, err := build.CombinedOutput(); err != nil {
		cleanup()
		return "", none, usageErr(fmt.Errorf("building the arm64 tokenpulse to push failed (%v: %s); build one in a checkout with CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build ./cmd/tokenpulse and give it with --adb-binary", err, strings.TrimSpace(string(msg))))
	}
	return out, cleanup, nil
}

// checkDeviceBinary refuses a file that is not an arm64 program Android
// runs: a static one, or one linked by Android's own linker64.
func checkDeviceBinary(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("%s is not an ELF program: %w", p, err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		return fmt.Errorf("%s is built for %s, not arm64 (build with GOARCH=arm64)", p, f.Machine)
	}
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_INTERP {
			continue
		}
		b, _ := io.ReadAll(prog.Open())
		interp := strings.TrimRight(string(b), "\x00")
		if interp != "/system/bin/linker64" {
			return fmt.Errorf("%s is linked dynamically against %s, which Android lacks: build it with CGO_ENABLED=0 GOOS=linux GOARCH=arm64", p, interp)
		}
	}
	return nil
}
