package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/inspect"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
	"github.com/tokenpulse/tokenpulse/internal/engine/quantize"
	"github.com/tokenpulse/tokenpulse/internal/engine/synth"
)

func init() { commands = append(commands, newModelCmd) }

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Inspect, quantise and synthesise GGUF model files",
	}
	cmd.AddCommand(newModelInfoCmd(), newModelSynthCmd(), newModelQuantizeCmd())
	return cmd
}

func newModelInfoCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info FILE",
		Short: "Print a GGUF file's architecture, parameter count, context, vocabulary and tensor types",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := gguf.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			fi := inspect.File(f)
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(fi)
			}
			return printFileInfo(cmd.OutOrStdout(), args[0], fi)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func printFileInfo(w io.Writer, path string, fi inspect.Info) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "file\t%s (%s, GGUF v%d)\n", path, humanize.IBytes(uint64(fi.FileBytes)), fi.Version)
	fmt.Fprintf(tw, "architecture\t%s\n", fi.Arch)
	if fi.Name != "" {
		fmt.Fprintf(tw, "name\t%s\n", fi.Name)
	}
	fmt.Fprintf(tw, "parameters\t%s (%d)\n", humanize.SIWithDigits(float64(fi.Params), 2, ""), fi.Params)
	fmt.Fprintf(tw, "context length\t%d\n", fi.CtxTrain)
	fmt.Fprintf(tw, "vocabulary\t%d (%s)\n", fi.Vocab, fi.Tokenizer)
	if c := fi.Config; c != nil {
		fmt.Fprintf(tw, "shape\tdim %d, %d layers, %d heads, %d KV heads, head dim %d, ffn %d\n", c.Dim, c.Layers, c.Heads, c.KVHeads, c.HeadDim(), c.FFN)
		rope := "normal"
		if c.RopeNeox {
			rope = "neox"
		}
		fmt.Fprintf(tw, "rope\t%s, base %g, %d dims, scale %g\n", rope, c.RopeBase, c.RopeDim, c.RopeScale)
	} else {
		fmt.Fprintf(tw, "engine\tcannot run this file: %s\n", fi.ConfigErr)
	}
	fmt.Fprintf(tw, "tensors\t%d\n", fi.Tensors)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "type\ttensors\tparameters\tbytes\t")
	for _, u := range fi.Types {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t\n", u.Type, u.Tensors, u.Params, humanize.IBytes(u.Bytes))
	}
	return tw.Flush()
}

func newModelSynthCmd() *cobra.Command {
	var sp synth.Spec
	var typ, out, preset string
	cmd := &cobra.Command{
		Use:   "synth -o FILE",
		Short: "Write a GGUF model of any shape with seeded random weights (for benchmarks and tests)",
		Long: `Write a GGUF model of any shape with seeded random weights and a byte-level
vocabulary, so the engine can be measured at realistic sizes with nothing
downloaded. Presets: 125m (llama, dim 768, 12 layers), 0.5b (qwen2, dim 896,
24 layers, 2 KV heads) and 1b (Llama 3.2 1B's shape: llama, dim 2048, 16
layers, 32 heads and 8 KV heads, ffn 8192, vocabulary 128256, tied
embeddings); flags given explicitly override the preset.

  tokenpulse model synth --preset 125m --type Q4_K -o /tmp/125m-q4k.gguf
  tokenpulse model synth --preset 1b --type Q4_K_M -o /tmp/1b-q4km.gguf
  tokenpulse model synth --arch qwen2 --dim 256 --layers 2 --heads 8 --kv-heads 4 --ffn 768 --vocab 512 --type Q8_0 -o m.gguf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if preset != "" {
				p, ok := synth.Presets[preset]
				if !ok {
					return usageErr(fmt.Errorf("unknown preset %q (want %s)", preset, strings.Join(synth.PresetNames(), ", ")))
				}
				if !cmd.Flags().Changed("tied") {
					sp.Tied = p.Tied
				}
				fl := cmd.Flags()
				set := func(name string, dst *int, v int) {
					if !fl.Changed(name) {
						*dst = v
					}
				}
				if !fl.Changed("arch") {
					sp.Arch = p.Arch
				}
				set("dim", &sp.Dim, p.Dim)
				set("layers", &sp.Layers, p.Layers)
				set("heads", &sp.Heads, p.Heads)
				set("kv-heads", &sp.KVHeads, p.KVHeads)
				set("ffn", &sp.FFN, p.FFN)
				set("vocab", &sp.Vocab, p.Vocab)
				set("ctx", &sp.Ctx, p.Ctx)
			}
			// A llama.cpp mixture (Q4_K_M) is made as llama.cpp users make
			// it: the weights written F16, then quantised.
			mix, isMix := quantize.LookupMix(typ)
			if isMix {
				sp.Type = quant.F16
			} else {
				t, err := quant.ParseType(strings.ToUpper(typ))
				if err != nil {
					return usageErr(fmt.Errorf("%w (or a llama.cpp mixture: %s)", err, quantize.MixNames()))
				}
				sp.Type = t
			}
			if out == "" {
				return usageErr(fmt.Errorf("-o FILE is required"))
			}
			tmp, err := os.CreateTemp(filepath.Dir(out), ".synth-*.gguf")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			fmt.Fprintf(cmd.ErrOrStderr(), "tokenpulse: writing a %s %s model (dim %d, %d layers) to %s ...\n", typ, sp.Arch, sp.Dim, sp.Layers, out)
			// Ctrl-C (or SIGTERM) stops the write and removes the
			// temporary file, which for the 1b preset is 2.3 GiB.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := synth.Write(ctxWriter{ctx, tmp}, sp); err != nil {
				tmp.Close()
				if ctx.Err() != nil {
					return fmt.Errorf("interrupted; %s not written", out)
				}
				if strings.Contains(err.Error(), "synth:") && !strings.Contains(err.Error(), "write") {
					return usageErr(err)
				}
				return err
			}
			// CreateTemp makes the file 0600; a model is for others to
			// read too (a llama-server run as another user), as quantize's
			// output is.
			if err := tmp.Chmod(0o644); err != nil {
				tmp.Close()
				return err
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			if isMix {
				if _, err := quantize.FileContext(ctx, tmp.Name(), out, quantize.Options{Mix: mix}); err != nil {
					if ctx.Err() != nil {
						return fmt.Errorf("interrupted; %s not written", out)
					}
					return err
				}
			} else if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			f, err := gguf.Open(out)
			if err != nil {
				return fmt.Errorf("reading back %s: %w", out, err)
			}
			defer f.Close()
			return printFileInfo(cmd.OutOrStdout(), out, inspect.File(f))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&preset, "preset", "", "named shape: 125m, 0.5b or 1b")
	fl.StringVar(&sp.Arch, "arch", "llama", "architecture: llama or qwen2")
	fl.IntVar(&sp.Dim, "dim", 256, "embedding width")
	fl.IntVar(&sp.Layers, "layers", 2, "transformer blocks")
	fl.IntVar(&sp.Heads, "heads", 8, "attention (query) heads")
	fl.IntVar(&sp.KVHeads, "kv-heads", 0, "key/value heads (0 = heads)")
	fl.IntVar(&sp.FFN, "ffn", 768, "feed-forward hidden width")
	fl.IntVar(&sp.Vocab, "vocab", 512, "vocabulary size (at least 259)")
	fl.IntVar(&sp.Ctx, "ctx", 2048, "context length written to the file")
	fl.StringVar(&typ, "type", "Q8_0", "type of the 2-D weights: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K, ..., or a llama.cpp mixture (Q4_K_M, Q5_K_M: written F16, then quantised as model quantize does)")
	fl.Uint64Var(&sp.Seed, "seed", 1, "random seed (the same seed gives the same file)")
	fl.BoolVar(&sp.Tied, "tied", false, "no output.weight: the output projection is token_embd (tied embeddings)")
	fl.StringVarP(&out, "output", "o", "", "output file")
	return cmd
}

func newModelQuantizeCmd() *cobra.Command {
	var typ string
	var rules []string
	var threads int
	cmd := &cobra.Command{
		Use:   "quantize IN.gguf OUT.gguf --type TYPE",
		Short: "Convert a GGUF model's weights to another type, per tensor if asked (mixed quantisation)",
		Long: `Convert the 2-D weights of a GGUF model (best from F32 or F16) to --type, or
to the type a --tensor-type rule gives. 1-D tensors (norms, biases) and
tensors whose row length is not a multiple of the type's block keep their
stored type (F32 in an F32 model); the summary says which. Metadata is
copied, with general.file_type and general.quantization_version set as
llama.cpp sets them. The output is written to a temporary file and renamed,
so it is never left half-written.

A --tensor-type rule is PATTERN=TYPE; rules are separated by commas or given
with several flags, and the first rule matching a tensor wins. PATTERN is a
tensor's stem (attn_output matches blk.N.attn_output.weight, token_embd
matches token_embd.weight), a full name, or a glob (blk.1?.ffn_*). A rule
that matches no tensor is an error.

Types: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K,
Q6_K; or one of llama.cpp's mixtures, Q4_K_M or Q5_K_M, which give each
tensor the type llama.cpp's llama-quantize gives it (Q6_K for output and
for attn_v and ffn_down on some layers; for rows that are not a multiple
of 256, Q5_0, Q5_1 or Q8_0 instead, as llama.cpp falls back). Requantising an already quantised model (Q8_0, ...) works, with a
warning: precision is lost twice.

  tokenpulse model quantize m-f16.gguf m-q4km.gguf --type Q4_K_M
  tokenpulse model quantize m-f16.gguf m-q4k.gguf --type Q4_K --tensor-type 'token_embd=Q6_K,attn_output=Q6_K'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr(fmt.Errorf("want IN.gguf OUT.gguf, got %d argument(s)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if typ == "" {
				return usageErr(errors.New("--type is required (for example Q4_K, Q8_0, F16)"))
			}
			if threads < 0 {
				return usageErr(errors.New("--threads must not be negative"))
			}
			opts := quantize.Options{Threads: threads}
			if mix, ok := quantize.LookupMix(typ); ok {
				opts.Mix = mix
			} else {
				t, err := parseQuantType(typ)
				if err != nil {
					return usageErr(fmt.Errorf("--type: %w (or a llama.cpp mixture: %s)", err, quantize.MixNames()))
				}
				opts.Type = t
			}
			for _, arg := range rules {
				for _, r := range strings.Split(arg, ",") {
					r = strings.TrimSpace(r)
					if r == "" {
						continue
					}
					pat, name, ok := strings.Cut(r, "=")
					pat, name = strings.TrimSpace(pat), strings.TrimSpace(name)
					if !ok || pat == "" || name == "" {
						return usageErr(fmt.Errorf("--tensor-type %q: want PATTERN=TYPE", r))
					}
					rt, err := parseQuantType(name)
					if err != nil {
						return usageErr(fmt.Errorf("--tensor-type %q: %w", r, err))
					}
					opts.Rules = append(opts.Rules, quantize.TensorTypeRule{Pattern: pat, Type: rt})
				}
			}
			in, out := args[0], args[1]
			fmt.Fprintf(cmd.ErrOrStderr(), "tokenpulse: quantising %s to %s ...\n", in, out)
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := quantize.FileContext(ctx, in, out, opts)
			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("interrupted; %s not written", out)
			}
			if errors.Is(err, quantize.ErrSpec) {
				return usageErr(err)
			}
			if err != nil {
				return err
			}
			if len(res.Plan.Requantized) > 0 {
				names := make([]string, len(res.Plan.Requantized))
				for i, t := range res.Plan.Requantized {
					names[i] = t.String()
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "tokenpulse: warning: %s is already quantised (%s tensors); requantising loses precision a second time — quantise from the F32/F16 original when you have it\n", in, strings.Join(names, ", "))
			}
			return printQuantizeSummary(cmd.OutOrStdout(), in, out, res)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&typ, "type", "", "type of the quantisable weights: Q4_K, Q5_K, Q6_K, Q8_0, Q4_0, F16, F32, ..., or a mixture: Q4_K_M, Q5_K_M")
	fl.StringArrayVar(&rules, "tensor-type", nil, "per-tensor types, PATTERN=TYPE[,PATTERN=TYPE...] (first match wins), e.g. 'token_embd=Q6_K,attn_output=Q6_K'")
	fl.IntVar(&threads, "threads", 0, "goroutines quantising rows (0 = number of CPUs)")
	return cmd
}

// parseQuantType parses a type name, case-insensitively, that the engine
// can quantise to.
func parseQuantType(s string) (quant.Type, error) {
	t, err := quant.ParseType(strings.ToUpper(strings.TrimSpace(s)))
	if err != nil {
		return 0, fmt.Errorf("unknown type %q (want F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K or Q6_K)", s)
	}
	if !quantize.Supports(t) {
		return 0, fmt.Errorf("cannot quantise to %v (not a weight type this tool can write)", t)
	}
	return t, nil
}

// fileTypeNames are llama.cpp's names of the general.file_type values
// quantize writes.
var fileTypeNames = map[uint32]string{
	0: "all F32", 1: "mostly F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
	17: "Q5_K_M", 18: "Q6_K", 32: "BF16",
}

func printQuantizeSummary(w io.Writer, in, out string, res *quantize.Result) error {
	p := res.Plan
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "tensor\tshape\tfrom\tto\tbefore\tafter\tnote")
	kept := map[string]int{}
	var keptOrder []string
	for _, t := range p.Tensors {
		dims := make([]string, len(t.Dims))
		for i, d := range t.Dims {
			dims[i] = fmt.Sprint(d)
		}
		note := ""
		switch {
		case t.Kept != "":
			note = "kept " + t.From.String() + ": " + t.Kept
			key := t.From.String() + ": " + t.Kept
			if kept[key] == 0 {
				keptOrder = append(keptOrder, key)
			}
			kept[key]++
		case t.Rule != "":
			note = "--tensor-type " + t.Rule
		case t.Fallback != "":
			note = "fallback: " + t.Fallback
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, strings.Join(dims, "×"), t.From, t.To,
			humanize.IBytes(t.FromBytes), humanize.IBytes(t.ToBytes), note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	byType := map[quant.Type]int{}
	var types []quant.Type
	for _, t := range p.Tensors {
		if byType[t.To] == 0 {
			types = append(types, t.To)
		}
		byType[t.To]++
	}
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = fmt.Sprintf("%d %v", byType[t], t)
	}
	fmt.Fprintf(w, "tensors: %d (%s)\n", len(p.Tensors), strings.Join(parts, ", "))
	for _, k := range keptOrder {
		typ, why, _ := strings.Cut(k, ": ")
		note := ""
		switch {
		case why == "1-D" || why == "norm":
			note = "; llama.cpp keeps these too"
		case strings.HasPrefix(why, "row of"):
			note = "; llama.cpp would fall back to a smaller block type or F16"
		}
		fmt.Fprintf(w, "kept %s: %d tensor(s), %s%s\n", typ, kept[k], why, note)
	}
	before, after := p.Bytes()
	fmt.Fprintf(w, "tensor data: %s -> %s\n", humanize.IBytes(before), humanize.IBytes(after))
	fmt.Fprintf(w, "file: %s %s (%d bytes) -> %s %s (%d bytes), %.1f%%\n", in, humanize.IBytes(uint64(res.InBytes)), res.InBytes,
		out, humanize.IBytes(uint64(res.OutBytes)), res.OutBytes, 100*float64(res.OutBytes)/float64(max(res.InBytes, 1)))
	name := fileTypeNames[p.FileType]
	fmt.Fprintf(w, "general.file_type: %d (%s)\n", p.FileType, name)
	if !slices.ContainsFunc(p.Tensors, func(t quantize.Tensor) bool { return t.To != t.From && t.To == t.Wanted }) {
		// Every tensor kept its type: the file is its input relabelled.
		wanted := "the asked type"
		for _, t := range p.Tensors {
			if t.Kept != "" && len(t.Dims) > 1 {
				wanted = t.Wanted.String()
				break
			}
		}
		fmt.Fprintf(w, "warning: no tensor was stored as %s: the file holds its input's data under file type %s; "+
			"give --type Q4_K_M or Q5_K_M (each tensor falls back to a block its rows fit, as llama.cpp does) or a type of 32-wide blocks (Q8_0, Q4_0)\n", wanted, name)
	}
	return nil
}
