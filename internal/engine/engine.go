// Package engine is tokenpulse's embedded inference runtime: a pure-Go
// forward pass for llama-family models (LLaMA 1/2/3, TinyLlama, SmolLM,
// Qwen2) read from GGUF files, with the habits that keep a token stream
// steady: weights mapped and paged in before the first request, a KV cache
// allocated once for the whole context, prompt prefill in batches and a
// cancellation check before every token.
//
// A [Model] is loaded once and shared; each conversation runs in a
// [Session], which owns its KV cache:
//
//	m, err := engine.Load(ctx, engine.Options{}) // "" = the bundled stories260K
//	if err != nil { ... }
//	defer m.Close()
//	if _, err := m.Warmup(ctx); err != nil { ... }
//	s := m.NewSession()
//	prompt := m.Tokenizer().Encode("Once upon a time", true, false)
//	res, err := s.Generate(ctx, prompt, engine.Params{MaxTokens: 64},
//		func(t engine.Token) error { fmt.Print(t.Text); return nil })
//
// Concurrency: a Model is safe for concurrent use by several sessions (their
// matrix products take turns on the model's worker pool); a Session is not
// safe for concurrent use.
//
// Matrix products run over the rows of the weights in their stored
// encoding, spread over a persistent worker pool (Options.Threads
// goroutines, started at load). As in llama.cpp, the input of a product
// over quantised weights is quantised once (to Q8_0, Q8_1 or Q8_K, the
// weights' quant.Kernel.ActType) and each row is one integer dot product
// (quant.Kernel.DotQ, AVX2 on amd64); float weights (F32, F16, BF16) take
// float dot products.
package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/tokenpulse/tokenpulse/internal/engine/bundled"
	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/tokenizer"
)

// ErrUnsupported is returned for a model the engine cannot run (an
// architecture or feature it does not implement).
var ErrUnsupported = errors.New("unsupported model")

// ErrContextFull is returned when a prompt and the tokens asked for do not
// fit in the session's context.
var ErrContextFull = errors.New("context full")

// ErrOption is returned by Load for an option out of range (a negative
// size, a context beyond the engine's limit).
var ErrOption = errors.New("invalid option")

// Options configure Load.
type Options struct {
	// ModelPath is the GGUF file to load; "" loads the bundled model.
	ModelPath string
	// Ctx is the context size in tokens, which sizes every session's KV
	// cache; 0 means min(DefaultCtx, the model's own context). A context
	// beyond the model's own (its context_length times its rope scaling,
	// a field often wrong) is allowed with a warning (Warn, Info.Warnings),
	// within the memory check.
	Ctx int
	// Threads is the number of goroutines sharing each matrix product; 0
	// means runtime.NumCPU().
	Threads int
	// BatchSize is the number of prompt tokens computed together in
	// prefill; 0 means DefaultBatch.
	BatchSize int
	// MaxMemory caps, in bytes, what the model may take: the mapped
	// weights, the rope tables and Sessions sessions' KV caches and
	// buffers (Memory). Load refuses with ErrMemory, before allocating
	// anything large, what exceeds MaxMemory or the memory the machine
	// has available: MemAvailable on Linux, lowered to the cgroup's room
	// and to what ulimit -v leaves; half the physical memory on macOS and
	// the BSDs. 0 means the machine's figure alone; where the system gives
	// none, 0 means 8 GiB and MaxMemory replaces it.
	MaxMemory uint64
	// Sessions is how many sessions the caller will hold at once (the
	// embedded server's parallel slots), counted by the memory check; 0
	// means 1.
	Sessions int
	// SpinWait is how long an idle worker spins waiting for the next job
	// of a forward pass before parking (the caller spins for its workers
	// for at most 50µs of it); workers park at once when a pass ends. 0
	// means DefaultSpinWait, negative parks at once.
	SpinWait time.Duration
	// KVType is the element type of the KV caches; "" means KVF32.
	KVType KVType
	// NoRepack keeps every weight matrix in the file's layout. By default,
	// where the CPU has a faster kernel on a rearranged layout (Q4_0,
	// Q8_0 and Q4_K on AVX-512 VNNI, Q4_0 and Q8_0 on AVX2; see
	// quant.Repacked), Load copies the matrices
	// of that type that go through matrix products into that layout, in
	// memory of their own (counted in Memory.Repacked), and prefill and
	// decode read the copies.
	NoRepack bool
	// Warn, when set, is called with each warning about the model or the
	// options (also kept in Info.Warnings), such as a context beyond the
	// model's own.
	Warn func(msg string)
}

// DefaultBatch is the prefill batch size used when Options.BatchSize is 0.
// The weights stream from memory once a batch, so a larger batch reads
// them fewer times: a 256-token prompt on the 0.5B Q8_0 file prefilled
// at 262-283 tok/s in batches of 32 and 377-408 in one of 256 (one
// thread, `generate --batch`). Cancellation is still seen between the
// layers of a batch (forward's stop).
const DefaultBatch = 256

// Model is a loaded model: configuration, weights, tokenizer and the worker
// pool.
type Model struct {
	cfg      Config
	file     *gguf.File
	path     string // "" for the bundled model
	w        *weights
	tok      *tokenizer.Tokenizer
	pool     *pool
	ctx      int
	batch    int
	kvType   KVType
	vocabOut int       // tokens that may be sampled: the tokenizer's vocabulary
	ropeCos  []float32 // (ctx, rope_dim/2)
	ropeSin  []float32 // (ctx, rope_dim/2)
	template chatTemplate
	loadTime time.Duration
	mem      Memory
	warnings []string

	hashOnce sync.Once
	sha      string

	freeRepacked func() // frees the rearranged weights (repack.go); nil when none
	released     []span // the file's bytes of the rearranged matrices, which Warmup does not page in
	// releaseMapped: the file is mapped from disk (not the bundled bytes),
	// so the released spans' pages may be dropped (dropReleased).
	releaseMapped bool

	mu    sync.Mutex
	spare *Session // a session made (and warmed) by Warmup, handed out first
}

// Load opens and maps the model file, validates it and prepares the
// worker pool. ctx is checked before the work starts.
func Load(ctx context.Context, opts Options) (*Model, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	start := time.Now()
	var f *gguf.File
	var err error
	if opts.ModelPath == "" {
		f, err = gguf.Parse(bundled.Model)
	} else {
		f, err = gguf.Open(opts.ModelPath)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: load: %w", err)
	}
	m, err := newModel(f, opts, opts.ModelPath == "")
	if err != nil {
		f.Close()
		return nil, err
	}
	m.path = opts.ModelPath
	m.loadTime = time.Since(start)
	return m, nil
}

func newModel(f *gguf.File, opts Options, isBundled bool) (*Model, error) {
	cfg, err := configFrom(f)
	if err != nil {
		return nil, err
	}
	if isBundled {
		// The bundled file's context_length is a converter placeholder;
		// the model's real training context is known (bundled.TrainedContext).
		cfg.CtxTrain = bundled.TrainedContext
	}
	if err := checkTensors(f, cfg); err != nil {
		return nil, err
	}
	w, err := loadWeights(f, cfg)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("engine: tokenizer: %w", err)
	}
	if tok.VocabSize() > cfg.Vocab {
		return nil, fmt.Errorf("engine: tokenizer has %d tokens but the embedding only %d rows", tok.VocabSize(), cfg.Vocab)
	}
	var warnings []string
	warn := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		warnings = append(warnings, msg)
		if opts.Warn != nil {
			opts.Warn(msg)
		}
	}
	n := opts.Ctx
	// Never trusted: context_length is often wrong (a converter's
	// placeholder, or the base model's rather than the fine-tune's), so it
	// only sets the default and a warning; memory is the real bound.
	limit := int(float64(cfg.CtxTrain) * cfg.RopeScale)
	switch {
	case n < 0:
		return nil, fmt.Errorf("engine: context size %d is negative: %w", n, ErrOption)
	case n == 0:
		n = min(DefaultCtx, limit)
	case n > maxCtx:
		return nil, fmt.Errorf("engine: context size %d exceeds %d: %w", n, maxCtx, ErrOption)
	case n > limit:
		warn("context size %d exceeds the model's own %d (%s.context_length %d × rope scaling %g): past it the answers may degrade", n, limit, cfg.Arch, cfg.CtxTrain, cfg.RopeScale)
	}
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	threads = min(threads, 256)
	batch := opts.BatchSize
	if batch <= 0 {
		batch = DefaultBatch
	}
	batch = min(batch, n, 4096)
	sessions := max(opts.Sessions, 1)
	// Everything large is sized below: check what it comes to first.
	kvType, err := ParseKVType(string(opts.KVType))
	if err != nil {
		return nil, err
	}
	var toRepack []*matrix
	if !opts.NoRepack {
		toRepack = w.repackable()
	}
	mem := estimateMemory(cfg, w, f.Size, n, batch, threads, sessions, kvType, toRepack)
	mem.Limit, mem.LimitBy = memoryLimit(opts.MaxMemory)
	if mem.Total > mem.Limit {
		return nil, fmt.Errorf("engine: the model would take %s with a context of %d (KV cache: %s.block_count %d × %d tokens × head_count_kv %d × head size %d × %d bytes); the limit is %s (%s): lower the context or raise the limit: %w",
			mem, n, cfg.Arch, cfg.Layers, n, cfg.KVHeads, cfg.HeadSize, 2*kvType.elemBytes(), ibytes(mem.Limit), mem.LimitBy, ErrMemory)
	}
	m := &Model{cfg: cfg, file: f, w: w, tok: tok, ctx: n, batch: batch, kvType: kvType, vocabOut: tok.VocabSize(), pool: newPool(threads, spinWait(opts.SpinWait)), mem: mem, warnings: warnings}
	if err := m.repack(toRepack, !isBundled); err != nil {
		m.pool.close()
		return nil, err
	}
	m.ropeCos, m.ropeSin = ropeTable(cfg, n)
	tmpl, _ := f.String("tokenizer.chat_template")
	m.template = detectTemplate(tmpl)
	return m, nil
}

// Close stops the worker pool and unmaps the file. No session of the model
// may be used afterwards.
func (m *Model) Close() error {
	m.pool.close()
	if m.freeRepacked != nil {
		m.freeRepacked()
		m.freeRepacked = nil
	}
	return m.file.Close()
}

// Config returns the model's hyperparameters.
func (m *Model) Config() Config { return m.cfg }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *tokenizer.Tokenizer { return m.tok }

// Ctx returns the context size of the model's sessions.
func (m *Model) Ctx() int { return m.ctx }

// Info describes a loaded model.
type Info struct {
	Arch         string         `json:"arch"`
	Name         string         `json:"name"`
	Params       uint64         `json:"params"`       // elements of all tensors
	Ctx          int            `json:"ctx"`          // session context size
	CtxTrain     int            `json:"ctx_train"`    // the model's own context
	Vocab        int            `json:"vocab"`        // tokenizer vocabulary
	Path         string         `json:"path"`         // "" for the bundled model
	Bundled      bool           `json:"bundled"`      // the embedded default model
	SHA256       string         `json:"sha256"`       // of the whole file
	FileBytes    int64          `json:"file_bytes"`   // size of the file
	Quantization string         `json:"quantization"` // e.g. "Q8_0: 36, F16: 5, F32: 11"
	TensorTypes  map[string]int `json:"tensor_types"` // tensors per type
	Threads      int            `json:"threads"`
	Batch        int            `json:"batch"`
	KVType       string         `json:"kv_type"`       // "f32" or "f16"
	Template     string         `json:"chat_template"` // recognised chat template family
	Memory       Memory         `json:"memory"`        // what the model takes, as checked by Load
	Kernels      string         `json:"kernels"`       // the integer dot products' instruction sets: "avx2", "avx512-vnni on Q8_0 rearranged at load; avx2"
	Warnings     []string       `json:"warnings,omitempty"`
}

// Info returns a description of the model. The first call hashes the
// whole file (about a second per GB), later calls reuse the hash.
func (m *Model) Info() Info {
	name, _ := m.file.String("general.name")
	types := map[string]int{}
	var params uint64
	for i := range m.file.Tensors {
		t := &m.file.Tensors[i]
		types[t.Type.String()]++
		params += t.Elements()
	}
	return Info{
		Arch: m.cfg.Arch, Name: name, Params: params, Ctx: m.ctx, CtxTrain: m.cfg.CtxTrain,
		Vocab: m.tok.VocabSize(), Path: m.path, Bundled: m.path == "", SHA256: m.hash(),
		FileBytes: m.file.Size, Quantization: TypeSummary(types), TensorTypes: types,
		Threads: m.pool.threads, Batch: m.batch, KVType: m.kvType.String(), Template: m.template.String(),
		Memory: m.mem, Kernels: m.w.kernelSummary(), Warnings: m.warnings,
	}
}

// TypeSummary formats a count of tensors per type, most frequent first:
// "Q4_K: 13, Q6_K: 3, F32: 5".
func TypeSummary(types map[string]int) string {
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if types[names[i]] != types[names[j]] {
			return types[names[i]] > types[names[j]]
		}
		return names[i] < names[j]
	})
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s: %d", n, types[n])
	}
	return s
}

// hashChunk is how much of the file hash reads between two hand-backs
// of the rearranged matrices' pages.
const hashChunk = 2 << 20

// clipSpans returns the parts of the sorted spans that lie in [lo, hi).
func clipSpans(spans []span, lo, hi int) []span {
	var out []span
	for _, s := range spans {
		if s.hi <= lo || s.lo >= hi {
			continue
		}
		out = append(out, span{max(s.lo, lo), min(s.hi, hi)})
	}
	return out
}

// hash returns the sha256 of the file, computing it once; "" when the
// file faulted (ErrModelFault) while it was read.
func (m *Model) hash() string {
	m.hashOnce.Do(func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		var err error
		defer m.guard(&err)
		// The sum reads every page of the mapping in; those of the
		// rearranged matrices are handed back chunk by chunk as it goes,
		// so that they and the rearranged copy are never resident
		// together for the whole model (the peak of a run's memory).
		data := m.file.Data()
		h := sha256.New()
		for lo := 0; lo < len(data); lo += hashChunk {
			hi := min(lo+hashChunk, len(data))
			h.Write(data[lo:hi])
			if m.releaseMapped {
				releaseFile(data, clipSpans(m.released, lo, hi))
			}
		}
		m.sha = hex.EncodeToString(h.Sum(nil))
		m.dropReleased() // pages that straddled two chunks
	})
	return m.sha
}

// spinWait resolves Options.SpinWait.
func spinWait(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultSpinWait
	case d < 0:
		return 0
	}
	return d
}
