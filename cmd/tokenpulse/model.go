package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
	"github.com/tokenpulse/tokenpulse/internal/engine/quant"
)

func init() { commands = append(commands, newModelCmd) }

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Inspect GGUF model files and synthesise random-weight models of any shape",
	}
	cmd.AddCommand(newModelInfoCmd(), newModelSynthCmd())
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
			fi := engine.Inspect(f)
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

func printFileInfo(w io.Writer, path string, fi engine.FileInfo) error {
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

// synthPresets are named shapes for `model synth --preset`.
var synthPresets = map[string]engine.SynthSpec{
	"125m": {Arch: "llama", Dim: 768, Layers: 12, Heads: 12, KVHeads: 12, FFN: 3072, Vocab: 32000, Ctx: 2048},
	"0.5b": {Arch: "qwen2", Dim: 896, Layers: 24, Heads: 14, KVHeads: 2, FFN: 4864, Vocab: 151936, Ctx: 4096},
}

func newModelSynthCmd() *cobra.Command {
	var sp engine.SynthSpec
	var typ, out, preset string
	cmd := &cobra.Command{
		Use:   "synth -o FILE",
		Short: "Write a GGUF model of any shape with seeded random weights (for benchmarks and tests)",
		Long: `Write a GGUF model of any shape with seeded random weights and a byte-level
vocabulary, so the engine can be measured at realistic sizes with nothing
downloaded. Presets: 125m (llama, dim 768, 12 layers) and 0.5b (qwen2, dim
896, 24 layers, 2 KV heads); flags given explicitly override the preset.

  tokenpulse model synth --preset 125m --type Q4_K -o /tmp/125m-q4k.gguf
  tokenpulse model synth --arch qwen2 --dim 256 --layers 2 --heads 8 --kv-heads 4 --ffn 768 --vocab 512 --type Q8_0 -o m.gguf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if preset != "" {
				p, ok := synthPresets[preset]
				if !ok {
					return usageErr(fmt.Errorf("unknown preset %q (want 125m or 0.5b)", preset))
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
			t, err := quant.ParseType(strings.ToUpper(typ))
			if err != nil {
				return usageErr(err)
			}
			sp.Type = t
			if out == "" {
				return usageErr(fmt.Errorf("-o FILE is required"))
			}
			tmp, err := os.CreateTemp(filepath.Dir(out), ".synth-*.gguf")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			fmt.Fprintf(cmd.ErrOrStderr(), "tokenpulse: writing a %s %s model (dim %d, %d layers) to %s ...\n", sp.Type, sp.Arch, sp.Dim, sp.Layers, out)
			if err := engine.Synth(tmp, sp); err != nil {
				tmp.Close()
				if strings.Contains(err.Error(), "synth:") && !strings.Contains(err.Error(), "write") {
					return usageErr(err)
				}
				return err
			}
			if err := tmp.Close(); err != nil {
				return err
			}
			if err := os.Rename(tmp.Name(), out); err != nil {
				return err
			}
			f, err := gguf.Open(out)
			if err != nil {
				return fmt.Errorf("reading back %s: %w", out, err)
			}
			defer f.Close()
			return printFileInfo(cmd.OutOrStdout(), out, engine.Inspect(f))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&preset, "preset", "", "named shape: 125m or 0.5b")
	fl.StringVar(&sp.Arch, "arch", "llama", "architecture: llama or qwen2")
	fl.IntVar(&sp.Dim, "dim", 256, "embedding width")
	fl.IntVar(&sp.Layers, "layers", 2, "transformer blocks")
	fl.IntVar(&sp.Heads, "heads", 8, "attention (query) heads")
	fl.IntVar(&sp.KVHeads, "kv-heads", 0, "key/value heads (0 = heads)")
	fl.IntVar(&sp.FFN, "ffn", 768, "feed-forward hidden width")
	fl.IntVar(&sp.Vocab, "vocab", 512, "vocabulary size (at least 259)")
	fl.IntVar(&sp.Ctx, "ctx", 2048, "context length written to the file")
	fl.StringVar(&typ, "type", "Q8_0", "type of the 2-D weights: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K, ...")
	fl.Uint64Var(&sp.Seed, "seed", 1, "random seed (the same seed gives the same file)")
	fl.StringVarP(&out, "output", "o", "", "output file")
	return cmd
}
