package engine

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/dustin/go-humanize"
)

// ErrMemory is returned by Load when the model, its KV caches and buffers
// would take more memory than the machine has available or than
// Options.MaxMemory allows. Nothing large has been allocated by then.
var ErrMemory = errors.New("not enough memory")

// Memory is what a loaded model takes, in bytes, computed from its
// validated hyperparameters before anything is sized from them.
type Memory struct {
	Weights  uint64 `json:"weights"`  // the mapped file, paged in by Warmup
	Decoded  uint64 `json:"decoded"`  // norms and biases decoded to float32
	Repacked uint64 `json:"repacked"` // weight matrices rearranged at load into memory of their own (Options.NoRepack)
	Rope     uint64 `json:"rope"`     // the rope angle tables (ctx × rope_dim)
	KVCache  uint64 `json:"kv_cache"` // one session's K and V caches (layers × ctx × kv_dim × 2 × 4 bytes, or 2 with an f16 cache)
	Buffers  uint64 `json:"buffers"`  // one session's activations, logits and per-thread scratch
	Sessions int    `json:"sessions"` // sessions counted
	Total    uint64 `json:"total"`    // Weights + Decoded + Repacked + Rope + Sessions × (KVCache + Buffers)
	Limit    uint64 `json:"limit"`    // what Load allowed
	LimitBy  string `json:"limit_by"` // where Limit came from ("MemAvailable", "--max-memory", ...)
}

// sat is saturating uint64 arithmetic: sizes computed from hyperparameters
// that multiply to more than 2^64 read as "too much", never wrap.
type sat uint64

const satMax = sat(^uint64(0))

func (a sat) mul(b uint64) sat {
	hi, lo := bits.Mul64(uint64(a), b)
	if hi != 0 {
		return satMax
	}
	return sat(lo)
}

func (a sat) add(b sat) sat {
	s, c := bits.Add64(uint64(a), uint64(b), 0)
	if c != 0 {
		return satMax
	}
	return sat(s)
}

// stateSizes are the lengths of a session's buffers (see newState), the
// one place they are computed, so the estimate and the allocation agree.
type stateSizes struct {
	dim, qdim, ffn, vocab int // per batch row: x, xb (dim); q, att (qdim); hb, hb2 (ffn)
	batch                 int
	scrLen, threads       int
	kv                    sat // elements of each of kCache and vCache
	kvType                KVType
	kvNew                 int // elements of each of kNew and vNew: (batch, kv_dim) with an f16 cache, else 0
	actLen                int
}

func sizesOf(c Config, ctx, batch, threads, actLen int, kvType KVType) stateSizes {
	z := stateSizes{
		dim: c.Dim, qdim: c.QDim(), ffn: c.FFN, vocab: c.Vocab, batch: batch,
		scrLen: max(ctx, c.Dim, c.FFN, c.QDim()), threads: threads,
		kv:     sat(c.Layers).mul(uint64(ctx)).mul(uint64(c.KVDim())),
		kvType: kvType,
		actLen: actLen,
	}
	if kvType == KVF16 {
		z.kvNew = batch * c.KVDim()
	}
	return z
}

// kvBytes is the size of one session's K and V caches together.
func (z stateSizes) kvBytes() sat { return z.kv.mul(2 * uint64(z.kvType.elemBytes())) }

// bufferBytes is the size of one session's other buffers.
func (z stateSizes) bufferBytes() sat {
	f := sat(z.batch).mul(uint64(2*z.dim + 2*z.qdim + 2*z.ffn)).
		add(sat(z.vocab)).
		add(sat(z.threads).mul(uint64(z.scrLen))).
		add(sat(2 * z.kvNew))
	return f.mul(4).add(sat(3 * z.batch).mul(uint64(z.actLen)))
}

// estimateMemory computes what m would take with sessions sessions, the
// matrices repack rearranged at load.
func estimateMemory(c Config, w *weights, fileBytes int64, ctx, batch, threads, sessions int, kvType KVType, repack []*matrix) Memory {
	z := sizesOf(c, ctx, batch, threads, w.actBytesAfter(repack), kvType)
	mem := Memory{
		Weights: uint64(max(fileBytes, 0)), Decoded: w.decodedBytes(), Repacked: matrixBytes(repack),
		Rope:    uint64(sat(ctx).mul(uint64(c.RopeDim / 2)).mul(2 * 4)),
		KVCache: uint64(z.kvBytes()), Buffers: uint64(z.bufferBytes()), Sessions: sessions,
	}
	perSession := sat(mem.KVCache).add(sat(mem.Buffers))
	mem.Total = uint64(sat(mem.Weights).add(sat(mem.Decoded)).add(sat(mem.Repacked)).add(sat(mem.Rope)).add(perSession.mul(uint64(sessions))))
	return mem
}

// String describes the estimate: "1.0 TiB (weights 4.7 MiB, KV cache 1.0
// TiB × 1 session, rope tables 512 MiB, buffers 2.3 MiB × 1)".
func (mem Memory) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (weights %s", ibytes(mem.Total), ibytes(mem.Weights+mem.Decoded))
	if mem.Repacked > 0 {
		fmt.Fprintf(&b, " + %s rearranged at load", ibytes(mem.Repacked))
	}
	fmt.Fprintf(&b, ", KV cache %s", ibytes(mem.KVCache))
	if mem.Sessions != 1 {
		fmt.Fprintf(&b, " × %d sessions", mem.Sessions)
	}
	fmt.Fprintf(&b, ", rope tables %s, buffers %s", ibytes(mem.Rope), ibytes(mem.Buffers))
	if mem.Sessions != 1 {
		fmt.Fprintf(&b, " × %d", mem.Sessions)
	}
	b.WriteString(")")
	return b.String()
}

func ibytes(n uint64) string {
	if n == uint64(satMax) {
		return "more than 16 EiB"
	}
	return humanize.IBytes(n)
}

// memoryLimit is how much Load may take: the machine's available memory,
// lowered to max when that is set. When the machine does not say,
// fallbackMemory stands in for it, unless max is set.
func memoryLimit(max uint64) (limit uint64, by string) {
	avail, src, ok := availableMemory()
	switch {
	case max > 0 && (!ok || max < avail):
		return max, "--max-memory"
	case ok:
		return avail, src
	}
	return fallbackMemory, "no figure from this system; assumed"
}

// fallbackMemory is the limit where the system gives no available-memory
// figure and no MaxMemory is set; MaxMemory raises or lowers it.
const fallbackMemory = 8 << 30

// availableMemorySource lets tests stand in for the machine.
var availableMemory = systemAvailableMemory
