package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/limits"
)

// Limits on the hyperparameters read from a model file, which is not
// trusted: each value is checked before anything is sized from it
// (package limits, which synth's models keep to as well).
const (
	maxDim    = limits.MaxDim
	maxLayers = limits.MaxLayers
	maxHeads  = limits.MaxHeads
	maxFFN    = limits.MaxFFN
	maxVocab  = limits.MaxVocab
	maxCtx    = limits.MaxCtx
	// DefaultCtx is the context size used when Options.Ctx is zero, unless
	// the model's own context is smaller.
	DefaultCtx = 2048
)

// Config holds the hyperparameters of a llama-family model.
type Config struct {
	Arch      string  // general.architecture: "llama", "qwen2", ...
	Dim       int     // embedding_length: width of the residual stream
	Layers    int     // block_count
	Heads     int     // attention.head_count: query heads
	KVHeads   int     // attention.head_count_kv: key/value heads (GQA)
	HeadSize  int     // attention.key_length, default Dim/Heads
	FFN       int     // feed_forward_length: SwiGLU hidden width
	Vocab     int     // rows of token_embd
	CtxTrain  int     // context_length: the model's own context
	RopeDim   int     // rope.dimension_count: rotated dims per head
	RopeBase  float64 // rope.freq_base, default 10000
	RopeScale float64 // linear scaling factor: positions are divided by it
	RopeNeox  bool    // NEOX rope (pairs i, i+RopeDim/2) rather than adjacent pairs
	NormEps   float32 // attention.layer_norm_rms_epsilon
	// RopeFreqs divides the rotation frequency of each pair (rope_dim/2),
	// from the tensor rope_freqs.weight (Llama 3.1's long-context scaling);
	// nil when absent.
	RopeFreqs []float32
}

// HeadDim returns the width of one attention head.
func (c Config) HeadDim() int { return c.HeadSize }

// QDim returns the width of all query heads together.
func (c Config) QDim() int { return c.Heads * c.HeadSize }

// KVDim returns the width of all key (or value) heads together: the width
// of one KV cache row.
func (c Config) KVDim() int { return c.KVHeads * c.HeadSize }

// Group returns how many query heads share one KV head.
func (c Config) Group() int { return c.Heads / c.KVHeads }

// neoxArchs use NEOX-style rope (llama.cpp's LLAMA_ROPE_TYPE_NEOX).
var neoxArchs = map[string]bool{"qwen2": true, "qwen": true, "qwen3": true, "phi3": false, "stablelm": true, "gptneox": true}

// supportedArchs are the architectures this forward pass computes.
var supportedArchs = map[string]bool{"llama": true, "qwen2": true}

// FileConfig reads the hyperparameters of f and holds them against its
// tensors' shapes, as Load does before it loads anything: the error says
// why the engine would refuse the file.
func FileConfig(f *gguf.File) (Config, error) {
	c, err := configFrom(f)
	if err == nil {
		err = checkTensors(f, c)
	}
	return c, err
}

// configFrom reads and validates the hyperparameters of f.
func configFrom(f *gguf.File) (Config, error) {
	var c Config
	arch, ok := f.String("general.architecture")
	if !ok {
		return c, fmt.Errorf("engine: general.architecture missing")
	}
	if !supportedArchs[arch] {
		return c, fmt.Errorf("engine: architecture %q: %w", arch, ErrUnsupported)
	}
	c.Arch = arch
	c.RopeNeox = neoxArchs[arch]
	geti := func(key string, def, max int) (int, error) {
		v, ok := f.Uint(arch + "." + key)
		if !ok {
			if def >= 0 {
				return def, nil
			}
			return 0, fmt.Errorf("engine: %s.%s missing", arch, key)
		}
		if v == 0 || v > uint64(max) {
			return 0, fmt.Errorf("engine: %s.%s = %d, want 1..%d", arch, key, v, max)
		}
		return int(v), nil
	}
	var err error
	if c.Dim, err = geti("embedding_length", -1, maxDim); err != nil {
		return c, err
	}
	if c.Layers, err = geti("block_count", -1, maxLayers); err != nil {
		return c, err
	}
	if c.Heads, err = geti("attention.head_count", -1, maxHeads); err != nil {
		return c, err
	}
	if c.KVHeads, err = geti("attention.head_count_kv", c.Heads, maxHeads); err != nil {
		return c, err
	}
	if c.FFN, err = geti("feed_forward_length", -1, maxFFN); err != nil {
		return c, err
	}
	if c.CtxTrain, err = geti("context_length", DefaultCtx, maxCtx); err != nil {
		return c, err
	}
	if c.Dim%c.Heads != 0 {
		return c, fmt.Errorf("engine: embedding_length %d is not a multiple of head_count %d", c.Dim, c.Heads)
	}
	if c.HeadSize, err = geti("attention.key_length", c.Dim/c.Heads, maxDim); err != nil {
		return c, err
	}
	if vl, ok := f.Uint(arch + ".attention.value_length"); ok && int(vl) != c.HeadSize {
		return c, fmt.Errorf("engine: value_length %d differs from key_length %d: %w", vl, c.HeadSize, ErrUnsupported)
	}
	if c.Heads%c.KVHeads != 0 {
		return c, fmt.Errorf("engine: head_count %d is not a multiple of head_count_kv %d", c.Heads, c.KVHeads)
	}
	if c.HeadSize%2 != 0 {
		return c, fmt.Errorf("engine: head size %d is odd", c.HeadSize)
	}
	if c.RopeDim, err = geti("rope.dimension_count", c.HeadSize, maxDim); err != nil {
		return c, err
	}
	if c.RopeDim > c.HeadSize || c.RopeDim%2 != 0 {
		return c, fmt.Errorf("engine: rope.dimension_count %d does not fit head size %d", c.RopeDim, c.HeadSize)
	}
	c.RopeBase = 10000
	if v, ok := f.Float(arch + ".rope.freq_base"); ok {
		if !(v > 1 && v < 1e12) {
			return c, fmt.Errorf("engine: rope.freq_base %v out of range", v)
		}
		c.RopeBase = v
	}
	c.RopeScale = 1
	if st, ok := f.String(arch + ".rope.scaling.type"); ok && st != "none" && st != "linear" {
		return c, fmt.Errorf("engine: rope scaling %q: %w", st, ErrUnsupported)
	}
	if v, ok := f.Float(arch + ".rope.scaling.factor"); ok && v != 0 {
		if !(v >= 1 && v <= 1024) {
			return c, fmt.Errorf("engine: rope.scaling.factor %v out of range", v)
		}
		if st, _ := f.String(arch + ".rope.scaling.type"); st != "none" {
			c.RopeScale = v
		}
	} else if v, ok := f.Float(arch + ".rope.scale_linear"); ok && v != 0 {
		if !(v >= 1 && v <= 1024) {
			return c, fmt.Errorf("engine: rope.scale_linear %v out of range", v)
		}
		c.RopeScale = v
	}
	c.NormEps = 1e-5
	if v, ok := f.Float(arch + ".attention.layer_norm_rms_epsilon"); ok {
		if !(v > 0 && v < 1) {
			return c, fmt.Errorf("engine: layer_norm_rms_epsilon %v out of range", v)
		}
		c.NormEps = float32(v)
	}
	if _, ok := f.Tensor("rope_freqs.weight"); ok {
		rf, err := loadVector(f, "rope_freqs.weight", c.RopeDim/2, true)
		if err != nil {
			return c, err
		}
		for _, v := range rf {
			if !(v > 0 && v < 1e6) {
				return c, fmt.Errorf("engine: rope_freqs.weight holds %v", v)
			}
		}
		c.RopeFreqs = rf
	}
	emb, ok := f.Tensor("token_embd.weight")
	if !ok || len(emb.Dims) != 2 {
		return c, fmt.Errorf("engine: token_embd.weight missing or not 2-D")
	}
	if emb.Dims[1] > maxVocab {
		return c, fmt.Errorf("engine: vocabulary of %d tokens exceeds %d", emb.Dims[1], maxVocab)
	}
	c.Vocab = int(emb.Dims[1])
	return c, nil
}

// checkTensors holds every hyperparameter of c against the shapes of the
// tensors the file actually has, naming the field that disagrees: nothing
// is sized from a number the weights do not bear out. (loadWeights then
// checks every tensor of every block; this check comes first, so a lie is
// named by its field rather than by the first tensor it breaks, and
// Inspect reports it too.)
func checkTensors(f *gguf.File, c Config) error {
	emb, _ := f.Tensor("token_embd.weight") // configFrom checked it is there and 2-D
	if emb.Dims[0] != uint64(c.Dim) {
		return fmt.Errorf("engine: %s.embedding_length %d does not match token_embd.weight's row length %d", c.Arch, c.Dim, emb.Dims[0])
	}
	if out, ok := f.Tensor("output.weight"); ok && (len(out.Dims) != 2 || out.Dims[0] != uint64(c.Dim) || out.Dims[1] != uint64(c.Vocab)) {
		return fmt.Errorf("engine: output.weight has dims %v, want [%d %d] (embedding_length, the %d rows of token_embd.weight)", out.Dims, c.Dim, c.Vocab, c.Vocab)
	}
	if toks, ok := f.Strings("tokenizer.ggml.tokens"); ok && len(toks) > c.Vocab {
		return fmt.Errorf("engine: tokenizer.ggml.tokens has %d tokens but token_embd.weight only %d rows", len(toks), c.Vocab)
	}
	// The blocks present: blk.0 ... blk.N-1, no more, no fewer.
	blocks := -1
	for i := range f.Tensors {
		name := f.Tensors[i].Name
		if !strings.HasPrefix(name, "blk.") {
			continue
		}
		num, _, ok := strings.Cut(name[len("blk."):], ".")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n < 0 {
			return fmt.Errorf("engine: tensor %q: bad block name", name)
		}
		blocks = max(blocks, n)
	}
	if blocks+1 != c.Layers {
		return fmt.Errorf("engine: %s.block_count %d does not match the %d blocks whose tensors the file holds (blk.0 to blk.%d)", c.Arch, c.Layers, blocks+1, blocks)
	}
	// Each width against the tensor it shapes (every block is checked
	// in full by loadWeights).
	shapes := []struct {
		tensor     string
		rows, cols int
		field      string
	}{
		{"attn_q", c.QDim(), c.Dim, fmt.Sprintf("attention.head_count %d × head size %d (attention.key_length, or embedding_length / head_count)", c.Heads, c.HeadSize)},
		{"attn_k", c.KVDim(), c.Dim, fmt.Sprintf("attention.head_count_kv %d × head size %d", c.KVHeads, c.HeadSize)},
		{"attn_v", c.KVDim(), c.Dim, fmt.Sprintf("attention.head_count_kv %d × head size %d", c.KVHeads, c.HeadSize)},
		{"attn_output", c.Dim, c.QDim(), fmt.Sprintf("embedding_length %d, attention.head_count %d × head size %d", c.Dim, c.Heads, c.HeadSize)},
		{"ffn_gate", c.FFN, c.Dim, fmt.Sprintf("feed_forward_length %d", c.FFN)},
		{"ffn_up", c.FFN, c.Dim, fmt.Sprintf("feed_forward_length %d", c.FFN)},
		{"ffn_down", c.Dim, c.FFN, fmt.Sprintf("feed_forward_length %d", c.FFN)},
	}
	for l := 0; l < c.Layers; l++ {
		for _, s := range shapes {
			name := fmt.Sprintf("blk.%d.%s.weight", l, s.tensor)
			t, ok := f.Tensor(name)
			if !ok {
				return fmt.Errorf("engine: %s.block_count is %d but tensor %s is missing", c.Arch, c.Layers, name)
			}
			if len(t.Dims) != 2 || t.Dims[0] != uint64(s.cols) || t.Dims[1] != uint64(s.rows) {
				return fmt.Errorf("engine: %s has dims %v, but the hyperparameters (%s) ask for [%d %d]", name, t.Dims, s.field, s.cols, s.rows)
			}
		}
	}
	return nil
}
