package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/launch"
)

// embeddedFlags configure the server bench starts when no --url is given.
type embeddedFlags struct {
	model     string
	ctx       int
	threads   int
	batch     int
	parallel  int
	maxMemory byteSize
	kvType    kvTypeFlag
	spinWait  time.Duration
	repack    bool
	cache     bool
}

func (e *embeddedFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&e.model, "model", "", "GGUF model for the embedded server (default: the bundled stories260K); ignored with --url")
	fl.IntVar(&e.ctx, "ctx", 0, "context size of the embedded server (default min(2048, the model's own); the bundled model's own is 512)")
	fl.IntVar(&e.threads, "threads", 0, "threads of the embedded engine (default: the number of cores less one, which is left to the measuring client)")
	fl.IntVar(&e.batch, "batch", 0, "prompt batch size of the embedded engine (default 256)")
	fl.IntVar(&e.parallel, "parallel", 1, "requests the embedded server generates at once (the rest queue)")
	fl.Var(&e.maxMemory, "max-memory", maxMemoryUsage)
	fl.Var(&e.kvType, "kv-type", kvTypeUsage)
	fl.DurationVar(&e.spinWait, "spin-wait", 0, spinWaitUsage)
	fl.BoolVar(&e.repack, "repack", true, repackUsage)
	fl.BoolVar(&e.cache, "prompt-cache", true, promptCacheUsage)
}

// repackUsage is the help of every --repack flag.
const repackUsage = "rearrange quantised weights at load into the interleaved layouts of the CPU's matrix kernels, where it has them (the load message names the kernels; counted in the memory check); --repack=false keeps the file's layout and its per-row kernels, for A/B runs"

// promptCacheUsage is the help of every --prompt-cache flag.
const promptCacheUsage = "reuse the keys and values of the longest prompt prefix a session already ran (a system prompt, earlier turns), as llama-server's cache_prompt does; a request's cache_prompt: false still runs its whole prompt, and usage.prompt_tokens_details.cached_tokens says what was reused; --prompt-cache=false runs every prompt token of every request"

// kvTypeUsage and spinWaitUsage are the help of every --kv-type and
// --spin-wait flag.
const (
	kvTypeUsage   = "KV cache element type of the embedded engine: f32, or f16 (half the memory, keys and values rounded to binary16)"
	spinWaitUsage = "how long the embedded engine's idle workers spin for the next job of a forward pass before sleeping (0 = the default, 300us; they sleep at once when a pass ends, and stop spinning while the machine is oversubscribed; negative, e.g. =-1ns, = never)"
)

// kvTypeFlag is a flag naming a KV cache type.
type kvTypeFlag engine.KVType

func (k *kvTypeFlag) String() string { return engine.KVType(*k).String() }

func (k *kvTypeFlag) Set(s string) error {
	t, err := engine.ParseKVType(s)
	if err != nil {
		return errors.New("want f32 or f16")
	}
	*k = kvTypeFlag(t)
	return nil
}

func (k *kvTypeFlag) Type() string { return "type" }

// maxMemoryUsage is the help of every --max-memory flag.
const maxMemoryUsage = "refuse a model whose weights, KV caches and buffers would take more than this (e.g. 8GiB, 512MB; default: the memory the machine has available)"

// engineModel is what the flags ask the embedded engine for.
func (e embeddedFlags) engineModel() launch.Model {
	return launch.Model{
		Path: e.model, Ctx: e.ctx, Threads: e.threads, Batch: e.batch, Parallel: e.parallel,
		MaxMemory: uint64(e.maxMemory), Warn: warnTo(os.Stderr),
		KVType: engine.KVType(e.kvType), SpinWait: e.spinWait, NoRepack: !e.repack,
		NoPromptCache: !e.cache,
	}
}

// warnTo returns a function printing the engine's warnings to w.
func warnTo(w io.Writer) func(string) {
	return func(msg string) { fmt.Fprintf(w, "tokenpulse: warning: %s\n", msg) }
}

// byteSize is a flag of a size in bytes: "8GiB", "512MB", "1073741824";
// 0 means unset.
type byteSize uint64

func (b *byteSize) String() string {
	if *b == 0 {
		return "0"
	}
	return humanize.IBytes(uint64(*b))
}

func (b *byteSize) Set(s string) error {
	n, err := humanize.ParseBytes(s)
	if err != nil {
		return fmt.Errorf("want a size such as 8GiB or 512MB: %w", err)
	}
	*b = byteSize(n)
	return nil
}

func (b *byteSize) Type() string { return "bytes" }
