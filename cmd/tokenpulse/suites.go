package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/suite"
)

func init() { commands = append(commands, newSuitesCmd) }

func newSuitesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "suites",
		Aliases: []string{"suite"},
		Short:   "List the builtin golden prompt suites",
		Long: `List the golden prompt suites built into tokenpulse: their language and,
per category, the weight, the number of prompts, max_tokens and thresholds.
Use "tokenpulse suites show NAME|FILE" to see a suite's prompts, and
"tokenpulse suites import FILE" to make a suite of real traffic; the file
format is described in docs/suite-format.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var all []*suite.Suite
			for _, name := range suite.Names() {
				s, err := suite.Builtin(name)
				if err != nil {
					return err // a broken builtin is a bug, not a usage error
				}
				all = append(all, s)
			}
			return suitesList(cmd.OutOrStdout(), all)
		},
	}
	cmd.AddCommand(newSuitesShowCmd(), newSuitesImportCmd())
	return cmd
}

func newSuitesShowCmd() *cobra.Command {
	var (
		sample int
		seed   uint64
	)
	cmd := &cobra.Command{
		Use:   "show NAME|FILE",
		Short: "Print a suite's categories and prompts",
		Long: `Print a suite's categories (weight, max_tokens, thresholds) and every
prompt. NAME is a builtin suite; anything that looks like a path, or is not a
builtin, is read as a YAML file. With --sample N, print instead the N prompts
that "tokenpulse bench --requests N --seed S" would send, in order.`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return suite.Names(), cobra.ShellCompDirectiveDefault
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := suite.Resolve(args[0])
			if err != nil {
				return usageErr(err)
			}
			if sample < 0 {
				return usageErr(fmt.Errorf("--sample must be ≥ 0, got %d", sample))
			}
			if cmd.Flags().Changed("sample") {
				return suitesSample(cmd.OutOrStdout(), s, sample, seed)
			}
			return suitesShow(cmd.OutOrStdout(), s)
		},
	}
	cmd.Flags().IntVar(&sample, "sample", 0, "print the stratified sample of N prompts instead of the whole suite")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the sample (as bench --seed)")
	return cmd
}

// suitesList prints one row per category of each suite.
func suitesList(w io.Writer, all []*suite.Suite) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUITE\tLANGUAGE\tCATEGORY\tWEIGHT\tPROMPTS\tMAX_TOKENS\tTHRESHOLDS")
	for _, s := range all {
		for i, c := range s.Categories {
			name, lang := s.Name, s.Language
			if i > 0 {
				name, lang = "", ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", name, lang, c.Name, suitesWeight(s, c), len(c.Prompts), suitesMaxTokens(c.MaxTokens), suitesThresholds(c.Thresholds))
		}
	}
	return tw.Flush()
}

// suitesShow prints a suite's header, then each category and its prompts.
func suitesShow(w io.Writer, s *suite.Suite) error {
	fmt.Fprintf(w, "%s: %s\n", s.Name, s.Description)
	fmt.Fprintf(w, "source:   %s\nlanguage: %s\n", s.Source, s.Language)
	if s.Defaults.System != "" {
		fmt.Fprintf(w, "system:   %s\n", s.Defaults.System)
	}
	for _, c := range s.Categories {
		fmt.Fprintf(w, "\n%s  weight %s  max_tokens %s  %d prompts  thresholds: %s\n", c.Name, suitesWeight(s, c), suitesMaxTokens(c.MaxTokens), len(c.Prompts), suitesThresholds(c.Thresholds))
		if c.Description != "" {
			fmt.Fprintf(w, "  %s\n", c.Description)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, p := range c.Prompts {
			if p.Conversation() {
				suitesTurns(tw, p, suitesExtras(p, s, c))
				continue
			}
			fmt.Fprintf(tw, "  %s\t%s%s\n", p.ID, suitesOneLine(p.Text), suitesExtras(p, s, c))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// suitesSample prints the prompts a bench run of n requests would send.
func suitesSample(w io.Writer, s *suite.Suite, n int, seed uint64) error {
	fmt.Fprintf(w, "%s: sample of %d, seed %d\n", s.Name, n, seed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, p := range s.Sample(n, seed) {
		text := suitesOneLine(p.Text)
		if p.Conversation() {
			text = fmt.Sprintf("(%d turns) %s", len(p.Turns), text)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i+1, p.Category, p.ID, text)
	}
	return tw.Flush()
}

// suitesWeight shows a category's weight and its share of the suite.
func suitesWeight(s *suite.Suite, c suite.Category) string {
	var total float64
	for _, o := range s.Categories {
		total += o.Weight
	}
	return fmt.Sprintf("%g (%.0f%%)", c.Weight, 100*c.Weight/total)
}

func suitesMaxTokens(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func suitesThresholds(t []string) string {
	if len(t) == 0 {
		return "-"
	}
	return strings.Join(t, ", ")
}

// suitesExtras notes where a prompt departs from its category's settings.
func suitesExtras(p suite.Prompt, s *suite.Suite, c suite.Category) string {
	var extra []string
	if p.Language != s.Language {
		extra = append(extra, "language "+p.Language)
	}
	if p.MaxTokens != c.MaxTokens {
		extra = append(extra, fmt.Sprintf("max_tokens %d", p.MaxTokens))
	}
	if p.System != s.Defaults.System {
		extra = append(extra, "own system prompt")
	}
	if len(extra) == 0 {
		return ""
	}
	return "  [" + strings.Join(extra, ", ") + "]"
}

// suitesOneLine folds line breaks so that each prompt takes one output line.
func suitesOneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// maxImportWarnings bounds the bad rows listed one by one.
const maxImportWarnings = 50

func newSuitesImportCmd() *cobra.Command {
	var (
		out     string
		opts    suite.ImportOptions
		turns   string
		nearDup float64
	)
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Make a suite of real user prompts: deduplicated, de-identified, categorised",
		Long: `Read prompts from real traffic and write a suite file that
"tokenpulse bench --suite FILE" accepts. FILE is ShareGPT JSON (a list of
{"conversations": [{"from": "human", "value": ...}, ...]}; the human turns),
JSONL (one object a line with a "prompt" field, or OpenAI "messages": the
user turns) or CSV (a header with a prompt column and optionally a label
column); --format auto goes by the extension (.jsonl, .ndjson, .csv,
.tsv), else by the first character ("[" ShareGPT, "{" JSONL, else CSV).

Each prompt is cleaned and de-identified (phone numbers, e-mail addresses,
ID numbers and bank card numbers become [PHONE], [EMAIL], [ID], [CARD]);
exact duplicates (same text after folding case, white space and
punctuation) and near duplicates (word-bigram Jaccard similarity ≥ --near-dup,
0.9 by default) are dropped, the first kept. The prompts are put in
categories by label (when the rows have the --label-field) or by length:
short under 15 words, long under 60, complex from 60 (a CJK character counts
as half a word), with the builtin suites' budgets and thresholds. Each
category's weight is its share of the kept prompts.

Bad rows are reported by line (JSONL, CSV) or array index (ShareGPT) and
skipped, among them a prompt of more than --max-prompt-bytes (512 KiB) and
a row of more than 4 times that, which is read past without being held; a summary goes to standard error. Exit status 0 when a suite was
written, 1 when no row was usable or a file could not be read or written, 2
for a wrong flag. The rules are in docs/suite-format.md.`,
		Example: `  tokenpulse suites import chats.jsonl -o support.yaml --name support
  tokenpulse suites import sharegpt.json --turns first -o sg.yaml
  tokenpulse suites import questions.csv --label-field intent -o triage.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch opts.Format {
			case suite.FormatAuto, suite.FormatShareGPT, suite.FormatJSONL, suite.FormatCSV:
			default:
				return usageErr(fmt.Errorf("--format %q: want auto, sharegpt, jsonl or csv", opts.Format))
			}
			switch opts.CategoryBy {
			case suite.CategoryByAuto, suite.CategoryByLength, suite.CategoryByLabel:
			default:
				return usageErr(fmt.Errorf("--category-by %q: want auto, length or label", opts.CategoryBy))
			}
			switch turns {
			case "all":
			case "first":
				opts.FirstTurnOnly = true
			case "split":
				opts.SplitTurns = true
			default:
				return usageErr(fmt.Errorf("--turns %q: want all, first or split", turns))
			}
			switch {
			case nearDup == 0:
				opts.NearDuplicate = -1
			case nearDup > 0 && nearDup <= 1:
				opts.NearDuplicate = nearDup
			default:
				return usageErr(fmt.Errorf("--near-dup %g: want a Jaccard similarity in (0, 1], or 0 for none", nearDup))
			}
			if opts.LongFrom < 1 || opts.ComplexFrom <= opts.LongFrom {
				return usageErr(fmt.Errorf("--long-from %d, --complex-from %d: want 1 ≤ long-from < complex-from", opts.LongFrom, opts.ComplexFrom))
			}
			if opts.MaxPromptBytes < 1 || opts.MaxPromptBytes > suite.MaxPromptBytes {
				return usageErr(fmt.Errorf("--max-prompt-bytes %d: want 1 to %d", opts.MaxPromptBytes, suite.MaxPromptBytes))
			}
			if strings.IndexFunc(opts.Name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 || len(opts.Name) > 128 {
				return usageErr(fmt.Errorf("--name %q: a suite name has no spaces and at most 128 bytes", opts.Name))
			}
			if strings.IndexFunc(opts.Language, unicode.IsSpace) >= 0 {
				return usageErr(fmt.Errorf("--language %q: a language tag has no spaces", opts.Language))
			}
			return suitesImport(cmd.ErrOrStderr(), cmd.OutOrStdout(), args[0], out, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "-", "write the suite to this file (- for standard output)")
	f.StringVar(&opts.Name, "name", "", "the suite's name (default: FILE's name without extension)")
	f.StringVar(&opts.Format, "format", suite.FormatAuto, "input format: auto, sharegpt, jsonl or csv")
	f.StringVar(&opts.CategoryBy, "category-by", suite.CategoryByAuto, "categories by length or label (auto: label when rows have the label field)")
	f.StringVar(&opts.LabelField, "label-field", "label", "the label's field (JSON) or column (CSV)")
	f.StringVar(&opts.PromptField, "prompt-field", "prompt", "the prompt's field (JSONL) or column (CSV)")
	f.StringVar(&opts.Language, "language", "", "the suite's language tag (default: detected, zh-CN or en)")
	f.StringVar(&turns, "turns", "all", "a conversation's user turns: all (one prompt with turns), first (the first turn only) or split (each turn a prompt)")
	f.Float64Var(&nearDup, "near-dup", suite.DefaultNearDuplicate, "drop prompts whose word-bigram Jaccard similarity with an earlier one is at least this (0: keep near duplicates)")
	f.IntVar(&opts.LongFrom, "long-from", suite.DefaultLongFrom, "length buckets: a prompt of this many words or more is long")
	f.IntVar(&opts.ComplexFrom, "complex-from", suite.DefaultComplexFrom, "length buckets: a prompt of this many words or more is complex")
	f.IntVar(&opts.MaxPromptBytes, "max-prompt-bytes", suite.DefaultMaxPromptBytes, "refuse a row whose prompt holds more bytes than this (512 KiB: a 128k-token context), or a row of 4 times as many")
	return cmd
}

// suitesImport imports in, writes the suite to out ("-": stdout) and the
// warnings and summary to stderr.
func suitesImport(stderr, stdout io.Writer, in, out string, opts suite.ImportOptions) error {
	f, err := os.Open(in)
	if err != nil {
		return withCode(exitFailure, err)
	}
	defer f.Close()
	s, rep, err := suite.ImportReader(in, f, opts)
	if rep != nil {
		for i, p := range rep.Problems {
			if i == maxImportWarnings {
				fmt.Fprintf(stderr, "tokenpulse: warning: %d more bad rows not shown\n", len(rep.Problems)-i)
				break
			}
			fmt.Fprintf(stderr, "tokenpulse: warning: %s\n", p)
		}
		suitesImportSummary(stderr, rep, s)
	}
	if err != nil {
		return withCode(exitFailure, err)
	}
	body, err := suite.Marshal(s)
	if err != nil {
		return withCode(exitFailure, err)
	}
	header := fmt.Sprintf("# Imported by \"tokenpulse suites import\" from %s (%s): %d rows, %d prompts kept.\n"+
		"# Personal data is masked as [PHONE], [EMAIL], [ID] and [CARD]; review the prompts\n"+
		"# before sharing this file. Format: docs/suite-format.md.\n", filepath.Base(in), rep.Format, rep.Rows, rep.Kept)
	body = append([]byte(header), body...)
	if len(body) > suite.MaxFileBytes {
		return withCode(exitFailure, fmt.Errorf("the suite would take %d bytes, more than bench loads (%d): split the input or lower --max-prompt-bytes", len(body), suite.MaxFileBytes))
	}
	// What is written must load as bench would load it.
	name := out
	if name == "-" {
		name = "<stdout>"
	}
	if _, err := suite.Parse(name, body, suite.Validate(validateThreshold)); err != nil {
		return withCode(exitFailure, fmt.Errorf("the imported suite does not load (a bug): %w", err))
	}
	if out == "-" {
		_, err = stdout.Write(body)
	} else {
		err = os.WriteFile(out, body, 0o644)
	}
	if err != nil {
		return withCode(exitFailure, err)
	}
	return nil
}

// suitesImportSummary prints what an import read, dropped and masked.
func suitesImportSummary(w io.Writer, rep *suite.ImportReport, s *suite.Suite) {
	fmt.Fprintf(w, "import %s (%s): %d rows read, %d bad; %d prompts, %d kept\n", rep.File, rep.Format, rep.Rows, rep.BadRows, rep.Prompts, rep.Kept)
	near := "near duplicates off"
	if rep.NearDuplicate > 0 {
		near = fmt.Sprintf("%d near duplicates (Jaccard ≥ %g)", rep.NearDuplicates, rep.NearDuplicate)
	}
	fmt.Fprintf(w, "  dropped: %d empty, %d exact duplicates, %s, %d bad rows\n", rep.Empty, rep.ExactDuplicates, near, rep.BadRows)
	var masked []string
	for _, k := range []string{suite.MaskPhone, suite.MaskEmail, suite.MaskID, suite.MaskCard} {
		masked = append(masked, fmt.Sprintf("%d %s", rep.Masked[k], k))
	}
	var other []string
	for k, n := range rep.Masked {
		if k != suite.MaskPhone && k != suite.MaskEmail && k != suite.MaskID && k != suite.MaskCard {
			other = append(other, fmt.Sprintf("%d %s", n, k))
		}
	}
	sort.Strings(other)
	fmt.Fprintf(w, "  masked in the kept prompts: %s\n", strings.Join(append(masked, other...), ", "))
	if s == nil {
		return
	}
	var cats []string
	for _, c := range s.Categories {
		cats = append(cats, fmt.Sprintf("%s %d (%g%%)", c.Name, len(c.Prompts), c.Weight))
	}
	fmt.Fprintf(w, "  categories by %s: %s\n", rep.CategoryBy, strings.Join(cats, ", "))
}

// suitesTurns prints a conversation: one line per turn, numbered, with
// its think time.
func suitesTurns(w io.Writer, p suite.Prompt, extras string) {
	for k, t := range p.Turns {
		id, think := "", ""
		if k == 0 {
			id = p.ID
		}
		if t.Think > 0 {
			think = fmt.Sprintf(" (after %s)", t.Think)
		}
		fmt.Fprintf(w, "  %s\tturn %d%s: %s", id, k+1, think, suitesOneLine(t.Text))
		if k == 0 {
			fmt.Fprint(w, extras)
		}
		fmt.Fprintln(w)
	}
}
