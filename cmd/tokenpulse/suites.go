package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tokenpulse/tokenpulse/suite"
)

func init() { commands = append(commands, newSuitesCmd) }

func newSuitesCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "suites",
		Short: "List the builtin golden prompt suites",
		Long: `List the golden prompt suites built into tokenpulse: their language and,
per category, the weight, the number of prompts, max_tokens and thresholds.
Use "tokenpulse suites show NAME|FILE" to see a suite's prompts; the file
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
	cmd.AddCommand(newSuitesShowCmd())
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i+1, p.Category, p.ID, suitesOneLine(p.Text))
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
