package quantize

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

// Mix is one of llama.cpp's named quantisation mixtures (its llama_ftype
// "Q4_K_M" and kin): a base type for most weights, wider types for the
// tensors that matter most (output, some attn_v and ffn_down), and, for
// a tensor whose row length is not a multiple of the chosen type's block,
// a fallback block type. The choices follow llama.cpp's
// llama_tensor_get_type (src/llama-quant.cpp, commit c392e50) for dense
// (not mixture-of-experts, not Falcon) models without an importance matrix.
type Mix struct {
	Name     string     // "Q4_K_M"
	Base     quant.Type // the type of the weights no rule raises
	FileType uint32     // llama.cpp's llama_ftype, written as general.file_type
	// moreBits is the type given to attn_v and ffn_down on the layers
	// llama.cpp's use_more_bits picks; 0 means the base type.
	moreBits quant.Type
}

// Mixes are the mixtures Quantize can make, by name.
var Mixes = []Mix{
	{Name: "Q4_K_M", Base: quant.Q4_K, FileType: 15, moreBits: quant.Q6_K},
	{Name: "Q5_K_M", Base: quant.Q5_K, FileType: 17, moreBits: quant.Q6_K},
}

// LookupMix returns the mixture named name (case-insensitive).
func LookupMix(name string) (Mix, bool) {
	for _, m := range Mixes {
		if strings.EqualFold(m.Name, strings.TrimSpace(name)) {
			return m, true
		}
	}
	return Mix{}, false
}

// useMoreBits is llama.cpp's choice of the layers whose attn_v and
// ffn_down get more bits in the _M mixes: the first and last eighth of
// the layers and every third layer between them.
func useMoreBits(layer, layers int) bool {
	return layer < layers/8 || layer >= 7*layers/8 || (layer-layers/8)%3 == 2
}

// mixChoice is a mixture's type for one tensor.
type mixChoice struct {
	Type     quant.Type
	Fallback string // why Type is a fallback, "" when it is the type wanted
}

// fallback is the type llama.cpp uses instead of want for a tensor whose
// rows of cols elements do not fit want's block: a 32-element block type
// of about the same precision, or F16 when even that does not fit. Where
// llama.cpp has no fallback and stops (Q8_0 on rows that are not a
// multiple of 32), this gives F16 too.
func fallback(want quant.Type, cols uint64) mixChoice {
	if fits(want, cols) {
		return mixChoice{Type: want}
	}
	var t quant.Type
	switch want {
	case quant.Q4_K:
		t = quant.Q5_0
	case quant.Q5_K:
		t = quant.Q5_1
	case quant.Q6_K:
		t = quant.Q8_0
	default:
		t = quant.F16
	}
	if !fits(t, cols) {
		t = quant.F16
	}
	return mixChoice{Type: t, Fallback: fmt.Sprintf("%v wanted, but a row of %d is not a multiple of its block", want, cols)}
}

// fits reports whether rows of cols elements are whole blocks of t.
func fits(t quant.Type, cols uint64) bool {
	k, err := quant.Lookup(t)
	return err == nil && cols%uint64(k.BlockSize) == 0
}

// layerOf returns N of a "blk.N." tensor name, or -1.
func layerOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	i := strings.IndexByte(rest, '.')
	if i <= 0 {
		return -1
	}
	n, err := strconv.Atoi(rest[:i])
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// mixTypes returns the type mix m gives each quantisable tensor of f (by
// index into f.Tensors), as llama.cpp's quantiser would. llama.cpp visits
// tensors sorted by layer (non-layer tensors first), then by name, and
// counts attn_v and ffn_down tensors in that order; the counts pick the
// layers that get more bits.
func mixTypes(f *gguf.File, m Mix) map[int]mixChoice {
	order := make([]int, 0, len(f.Tensors))
	hasOutput, nAttnV := false, 0
	for i := range f.Tensors {
		name := f.Tensors[i].Name
		switch {
		case strings.Contains(name, "attn_v.weight"), strings.Contains(name, "attn_qkv.weight"), strings.Contains(name, "attn_kv_b.weight"):
			nAttnV++
		case name == "output.weight":
			hasOutput = true
		}
		if quantizable(&f.Tensors[i]) == "" {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		na, nb := f.Tensors[a].Name, f.Tensors[b].Name
		return cmp.Or(cmp.Compare(layerOf(na), layerOf(nb)), strings.Compare(na, nb))
	})
	nLayers := 0
	if arch, ok := f.String("general.architecture"); ok {
		if n, ok := f.Uint(arch + ".block_count"); ok {
			nLayers = int(n)
		}
	}
	if nLayers == 0 {
		for _, i := range order {
			nLayers = max(nLayers, layerOf(f.Tensors[i].Name)+1)
		}
	}
	types := make(map[int]mixChoice, len(order))
	iAttnV, iFFNDown := 0, 0
	for _, i := range order {
		t := &f.Tensors[i]
		name, cols := t.Name, t.Dims[0]
		typ := m.Base
		switch {
		case name == "output.weight" || (!hasOutput && name == "token_embd.weight"):
			// The output projection: Q6_K, or Q8_0 when its rows do not
			// fit the base type's block.
			if fits(m.Base, cols) {
				typ = quant.Q6_K
			} else {
				typ = quant.Q8_0
			}
		case name == "token_embd.weight":
		case strings.Contains(name, "attn_v.weight"):
			if m.moreBits != 0 && useMoreBits(iAttnV, nAttnV) {
				typ = m.moreBits
			}
			iAttnV++
		case strings.Contains(name, "ffn_down"):
			if m.moreBits != 0 && useMoreBits(iFFNDown, nLayers) {
				typ = m.moreBits
			}
			iFFNDown++
		case strings.Contains(name, "attn_qkv.weight"):
			// llama.cpp raises a fused QKV one step: Q4_K_M to Q5_K,
			// Q5_K_M to Q6_K.
			switch m.Base {
			case quant.Q4_K:
				typ = quant.Q5_K
			case quant.Q5_K:
				typ = quant.Q6_K
			}
		}
		types[i] = fallback(typ, cols)
	}
	return types
}

// MixNames lists the mixtures' names, for messages.
func MixNames() string {
	names := make([]string, len(Mixes))
	for i, m := range Mixes {
		names[i] = m.Name
	}
	return strings.Join(names, ", ")
}

// String returns the mixture's name.
func (m Mix) String() string {
	if m.Name == "" {
		return fmt.Sprint(m.Base)
	}
	return m.Name
}
