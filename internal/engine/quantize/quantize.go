// Package quantize converts a GGUF model's weights to other types
// (tokenpulse model quantize), as llama.cpp's llama-quantize does: a plan
// of each tensor's type (a default, per-tensor rules), then the
// conversion, tensor by tensor over several threads. It is an offline
// tool: the engine, which loads the result, does not import it.
package quantize

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// ErrSpec marks a quantisation request that cannot be carried out
// as asked: a type with no quantiser, a tensor-type pattern that matches no
// tensor or is malformed, an output path that is the input.
var ErrSpec = errors.New("invalid quantisation request")

// TensorTypeRule gives the tensors matched by Pattern the type Type.
//
// Pattern matches a tensor when it equals, or (with *, ? or [...]) matches
// as a path.Match glob, one of: the full name ("blk.3.attn_output.weight"),
// the name without its ".weight"/".bias" suffix ("blk.3.attn_output"), or
// its stem, the name without the "blk.N." prefix and the suffix
// ("attn_output", "token_embd").
type TensorTypeRule struct {
	Pattern string
	Type    quant.Type
}

// Options say what Quantize makes of each tensor.
type Options struct {
	// Type is the type of every quantisable tensor no rule matches.
	Type quant.Type
	// Rules are per-tensor types; the first rule that matches a tensor
	// wins. Every rule must match at least one tensor.
	Rules []TensorTypeRule
	// Threads is the number of goroutines quantising rows; 0 means
	// GOMAXPROCS.
	Threads int
	// Mix, when its Name is set, makes llama.cpp's mixture of that name
	// (see [Mix]): Type is then ignored, and each tensor no rule matches
	// gets the mixture's type for it, with llama.cpp's fallback types for
	// rows that do not fit a block.
	Mix Mix
}

// Tensor is the plan for one tensor.
type Tensor struct {
	Name      string
	Dims      []uint64
	From, To  quant.Type
	FromBytes uint64
	ToBytes   uint64
	// Wanted is the type asked for (the rule's or the default); To differs
	// from it when the tensor is kept as it is, and Kept says why.
	Wanted quant.Type
	Rule   string // the pattern that chose Wanted, "" for the default type
	Kept   string // why the tensor keeps its type ("" when converted or already Wanted)
	// Fallback says why a mixture gave the tensor a smaller block type
	// than it wanted (its rows do not fit the wanted type's block).
	Fallback string
}

// Converted reports whether the tensor's data is re-encoded.
func (q *Tensor) Converted() bool { return q.From != q.To }

// Plan is what Quantize does with a file: the type of every tensor
// and the general.file_type written.
type Plan struct {
	Tensors  []Tensor // in file order
	FileType uint32   // llama.cpp's llama_ftype written as general.file_type
	// Requantized lists the already-quantised source types that are
	// re-encoded to another quantised type (precision is lost twice).
	Requantized []quant.Type
}

// Bytes returns the tensor data size before and after.
func (p *Plan) Bytes() (before, after uint64) {
	for _, t := range p.Tensors {
		before += t.FromBytes
		after += t.ToBytes
	}
	return before, after
}

// Supports reports whether Quantize can produce tensors of type t.
func Supports(t quant.Type) bool {
	k, err := quant.Lookup(t)
	return err == nil && k.Quantize != nil
}

// tensorStem returns name without a "blk.N." prefix and a ".weight" or
// ".bias" suffix, and name without the suffix.
func tensorStem(name string) (stem, base string) {
	base = name
	for _, suf := range []string{".weight", ".bias"} {
		if strings.HasSuffix(base, suf) {
			base = strings.TrimSuffix(base, suf)
			break
		}
	}
	stem = base
	if rest, ok := strings.CutPrefix(stem, "blk."); ok {
		if i := strings.IndexByte(rest, '.'); i > 0 && strings.Trim(rest[:i], "0123456789") == "" {
			stem = rest[i+1:]
		}
	}
	return stem, base
}

// matchTensor reports whether pattern selects the tensor name.
func matchTensor(pattern, name string) (bool, error) {
	stem, base := tensorStem(name)
	glob := strings.ContainsAny(pattern, "*?[")
	for _, s := range []string{name, base, stem} {
		if !glob {
			if s == pattern {
				return true, nil
			}
			continue
		}
		ok, err := path.Match(pattern, s)
		if err != nil {
			return false, err
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

// quantizable reports whether llama.cpp's quantiser would re-encode the
// tensor at all, and why not: it must be a weight ("...weight") of two or
// more dimensions and not a norm or a mixture-of-experts router.
func quantizable(t *gguf.TensorInfo) string {
	switch {
	case len(t.Dims) < 2:
		return "1-D"
	case !strings.HasSuffix(t.Name, "weight"):
		return "not a weight"
	case strings.Contains(t.Name, "_norm.weight"):
		return "norm"
	case strings.Contains(t.Name, "ffn_gate_inp.weight"):
		return "MoE router"
	}
	return ""
}

// bitsPerWeight is the storage cost of one element of t.
func bitsPerWeight(t quant.Type) float64 {
	k, err := quant.Lookup(t)
	if err != nil {
		return 0
	}
	return float64(8*k.BlockBytes) / float64(k.BlockSize)
}

// NewPlan decides the type of every tensor of f. Tensors that are
// not quantisable weights (1-D tensors such as norms and biases) keep
// their stored type (F32 in an F32 or F16 model), as Kept says; so does,
// for a single type (no Mix), a tensor whose row length is not a multiple
// of the wanted type's block. A Mix instead falls back to another block
// type, as llama.cpp does (Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0, then
// F16), and says so in Fallback.
func NewPlan(f *gguf.File, opts Options) (*Plan, error) {
	var mixed map[int]mixChoice
	if opts.Mix.Name != "" {
		opts.Type = opts.Mix.Base
		mixed = mixTypes(f, opts.Mix)
	}
	if !Supports(opts.Type) {
		return nil, fmt.Errorf("engine: quantize: cannot quantise to %v: %w", opts.Type, ErrSpec)
	}
	used := make([]bool, len(opts.Rules))
	for _, r := range opts.Rules {
		if r.Pattern == "" {
			return nil, fmt.Errorf("engine: quantize: empty tensor pattern: %w", ErrSpec)
		}
		if _, err := path.Match(r.Pattern, ""); err != nil {
			return nil, fmt.Errorf("engine: quantize: pattern %q: %v: %w", r.Pattern, err, ErrSpec)
		}
		if !Supports(r.Type) {
			return nil, fmt.Errorf("engine: quantize: pattern %q: cannot quantise to %v: %w", r.Pattern, r.Type, ErrSpec)
		}
	}
	p := &Plan{}
	requant := map[quant.Type]bool{}
	raised := false
	for i := range f.Tensors {
		t := &f.Tensors[i]
		q := Tensor{
			Name: t.Name, Dims: append([]uint64(nil), t.Dims...),
			From: t.Type, To: t.Type, Wanted: opts.Type,
			FromBytes: uint64(len(t.Data)), ToBytes: uint64(len(t.Data)),
		}
		for j, r := range opts.Rules {
			ok, _ := matchTensor(r.Pattern, t.Name)
			if ok {
				used[j] = true
				q.Wanted, q.Rule = r.Type, r.Pattern
				break
			}
		}
		if mc, ok := mixed[i]; ok && q.Rule == "" {
			q.Wanted, q.Fallback = mc.Type, mc.Fallback
		}
		k, _ := quant.Lookup(q.Wanted)
		src, srcErr := quant.Lookup(t.Type)
		switch why := quantizable(t); {
		case why != "":
			q.Kept = why
		case q.Wanted == t.Type:
		case t.Dims[0]%uint64(k.BlockSize) != 0:
			q.Kept = fmt.Sprintf("row of %d is not a multiple of %v's block of %d", t.Dims[0], q.Wanted, k.BlockSize)
		case srcErr != nil || src.Dequant == nil:
			q.Kept = fmt.Sprintf("no decoder for %v", t.Type)
		default:
			q.To = q.Wanted
			n, err := gguf.TensorBytes(q.To, t.Dims)
			if err != nil {
				return nil, fmt.Errorf("engine: quantize: tensor %s: %w", t.Name, err)
			}
			q.ToBytes = n
			if src.BlockSize > 1 && k.BlockSize > 1 {
				requant[t.Type] = true
			}
			if q.Rule != "" && bitsPerWeight(q.To) > bitsPerWeight(opts.Type) {
				raised = true
			}
		}
		p.Tensors = append(p.Tensors, q)
	}
	for j, r := range opts.Rules {
		if !used[j] {
			return nil, fmt.Errorf("engine: quantize: pattern %q matches no tensor (patterns match a full name such as blk.0.attn_output.weight, or a stem such as attn_output or token_embd, or a glob): %w", r.Pattern, ErrSpec)
		}
	}
	for _, t := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q2_K, quant.Q3_K, quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q8_1, quant.Q8_K} {
		if requant[t] {
			p.Requantized = append(p.Requantized, t)
		}
	}
	p.FileType = fileType(opts.Type, raised)
	if opts.Mix.Name != "" {
		p.FileType = opts.Mix.FileType
	}
	return p, nil
}

// fileType returns llama.cpp's llama_ftype for a model mostly of type t;
// raised says some tensors were given a wider type (the _M mixes).
func fileType(t quant.Type, raised bool) uint32 {
	pick := func(small, medium uint32) uint32 {
		if !raised {
			return small
		}
		for _, m := range Mixes {
			if m.Base == t {
				return m.FileType
			}
		}
		return medium
	}
	switch t {
	case quant.F32:
		return 0
	case quant.F16:
		return 1
	case quant.Q4_0:
		return 2
	case quant.Q4_1:
		return 3
	case quant.Q8_0:
		return 7
	case quant.Q5_0:
		return 8
	case quant.Q5_1:
		return 9
	case quant.Q2_K:
		return 10
	case quant.Q3_K:
		return pick(11, 12) // Q3_K_S, Q3_K_M
	case quant.Q4_K:
		return pick(14, 0) // Q4_K_S, Q4_K_M (Mixes)
	case quant.Q5_K:
		return pick(16, 0) // Q5_K_S, Q5_K_M (Mixes)
	case quant.Q6_K:
		return 18
	case quant.BF16:
		return 32
	}
	return 0
}

// Write writes the quantised file to w: every metadata entry of f in
// order, with general.file_type and general.quantization_version set (as
// llama.cpp does), then the tensors in file order, converted as planned.
func (p *Plan) Write(w io.Writer, f *gguf.File, threads int) error {
	return p.write(context.Background(), w, f, threads)
}

// write is Write, checking ctx before converting each tensor.
func (p *Plan) write(ctx context.Context, w io.Writer, f *gguf.File, threads int) error {
	if len(p.Tensors) != len(f.Tensors) {
		return errors.New("engine: quantize: plan is for another file")
	}
	var g gguf.Writer
	if f.Alignment != gguf.DefaultAlignment {
		g.Alignment = f.Alignment
	}
	set := map[string]any{
		"general.quantization_version": uint32(2),
		"general.file_type":            p.FileType,
	}
	for _, kv := range f.KV {
		if kv.Key == "general.alignment" {
			continue // the Writer writes it from Alignment
		}
		if v, ok := set[kv.Key]; ok {
			g.Add(kv.Key, v)
			delete(set, kv.Key)
			continue
		}
		g.Add(kv.Key, kv.Value)
	}
	for _, key := range []string{"general.quantization_version", "general.file_type"} {
		if v, ok := set[key]; ok {
			g.Add(key, v)
		}
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	for i := range p.Tensors {
		q, t := &p.Tensors[i], &f.Tensors[i]
		if q.Name != t.Name {
			return errors.New("engine: quantize: plan is for another file")
		}
		if !q.Converted() {
			g.AddTensor(q.Name, q.To, q.Dims, t.Data)
			continue
		}
		g.AddTensorFunc(q.Name, q.To, q.Dims, func() ([]byte, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return convertTensor(t, q.To, threads)
		})
	}
	if _, err := g.WriteTo(w); err != nil {
		return fmt.Errorf("engine: quantize: %w", err)
	}
	return nil
}

// convertTensor decodes every row of t to float32 and encodes it as to,
// rows split between threads goroutines.
func convertTensor(t *gguf.TensorInfo, to quant.Type, threads int) ([]byte, error) {
	src, err := quant.Lookup(t.Type)
	if err != nil {
		return nil, err
	}
	dst, err := quant.Lookup(to)
	if err != nil {
		return nil, err
	}
	cols := int(t.Dims[0])
	rows := t.Rows()
	srb, err := quant.RowBytes(t.Type, cols)
	if err != nil {
		return nil, err
	}
	drb, err := quant.RowBytes(to, cols)
	if err != nil {
		return nil, err
	}
	if len(t.Data) != srb*rows {
		return nil, fmt.Errorf("%d bytes of data, want %d", len(t.Data), srb*rows)
	}
	out := make([]byte, drb*rows)
	threads = max(1, min(threads, rows))
	var wg sync.WaitGroup
	for w := 0; w < threads; w++ {
		lo, hi := rows*w/threads, rows*(w+1)/threads
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]float32, cols)
			for r := lo; r < hi; r++ {
				src.Dequant(buf, t.Data[r*srb:(r+1)*srb])
				dst.Quantize(out[r*drb:(r+1)*drb], buf)
			}
		}()
	}
	wg.Wait()
	return out, nil
}

// Result is what File did.
type Result struct {
	Plan      *Plan
	InBytes   int64 // size of the input file
	OutBytes  int64 // size of the output file
	InputPath string
}

// File writes to outPath a copy of the GGUF file inPath with its
// tensors converted as opts say (see NewPlan). Everything is checked
// before anything is written; the file is written to a temporary file in
// the same directory, synced and renamed over outPath, so outPath is
// either left as it was or complete. outPath must not be inPath.
func File(inPath, outPath string, opts Options) (*Result, error) {
	return FileContext(context.Background(), inPath, outPath, opts)
}

// FileContext is File, stopped when ctx is done: before each tensor is
// converted, it checks ctx and, if it is done, removes the temporary file
// and returns ctx's error, leaving outPath as it was.
func FileContext(ctx context.Context, inPath, outPath string, opts Options) (*Result, error) {
	if same, err := samePath(inPath, outPath); err != nil {
		return nil, err
	} else if same {
		return nil, fmt.Errorf("engine: quantize: output %s is the input file; write to another path: %w", outPath, ErrSpec)
	}
	f, err := gguf.Open(inPath)
	if err != nil {
		return nil, fmt.Errorf("engine: quantize: %w", err)
	}
	defer f.Close()
	plan, err := NewPlan(f, opts)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(outPath), ".quantize-*.gguf")
	if err != nil {
		return nil, fmt.Errorf("engine: quantize: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := plan.write(ctx, tmp, f, opts.Threads); err != nil {
		return nil, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return nil, fmt.Errorf("engine: quantize: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("engine: quantize: %w", err)
	}
	st, err := tmp.Stat()
	if err != nil {
		return nil, fmt.Errorf("engine: quantize: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("engine: quantize: %w", err)
	}
	if err := os.Rename(tmp.Name(), outPath); err != nil {
		return nil, fmt.Errorf("engine: quantize: %w", err)
	}
	ok = true
	return &Result{Plan: plan, InBytes: f.Size, OutBytes: st.Size(), InputPath: inPath}, nil
}

// samePath reports whether a and b name the same file: the same cleaned
// absolute path, or (when both exist) the same file through links.
func samePath(a, b string) (bool, error) {
	aa, err := filepath.Abs(a)
	if err != nil {
		return false, err
	}
	bb, err := filepath.Abs(b)
	if err != nil {
		return false, err
	}
	if aa == bb {
		return true, nil
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil && os.SameFile(sa, sb) {
		return true, nil
	}
	return false, nil
}
