// Command tokenpulse measures what a person feels when a language model
// streams an answer: time to the first token and the steadiness of the
// tokens after it. It benchmarks any OpenAI-compatible streaming endpoint,
// serves its own streaming endpoint on an embedded pure-Go engine, judges
// runs and reports them.
//
// Each subcommand lives in a file of its own and is a thin client of the
// library packages; see `tokenpulse help`.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/internal/didyoumean"
)

// Exit codes, documented in the README. A crossed threshold has a code of
// its own so that CI can tell a slow build from a broken one.
const (
	exitOK         = 0
	exitFailure    = 1  // the run could not be carried out (I/O, target down, ...)
	exitUsage      = 2  // bad flags, bad suite or threshold syntax
	exitRegression = 98 // compare found a statistically significant regression
	exitThreshold  = 99 // a threshold was crossed
)

// exitError carries an exit code up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// usageErr wraps err so that the command exits with exitUsage.
func usageErr(err error) error { return &exitError{code: exitUsage, err: err} }

// withCode wraps err so that the command exits with code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// commands collects the subcommands; each file adds its own in an init
// function, so files never edit each other.
var commands []func() *cobra.Command

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "tokenpulse",
		Short:         "Measure time to first token and token-gap steadiness of streaming LLM endpoints",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageErr(suggestFlag(cmd, err)) })
	for _, mk := range commands {
		root.AddCommand(mk())
	}
	return root
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.code != exitThreshold && ee.code != exitRegression {
			fmt.Fprintln(os.Stderr, "tokenpulse:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "tokenpulse:", err)
	if isUsage(err) {
		return exitUsage
	}
	return exitFailure
}

// isUsage reports whether err came from cobra's own argument checking.
func isUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// suggestFlag adds "did you mean --NAME?" to cobra's unknown-flag error
// when a flag of cmd (its own or inherited) is a likely typo of the one
// given: cobra suggests mistyped subcommands, never flags.
func suggestFlag(cmd *cobra.Command, err error) error {
	const prefix = "unknown flag: --"
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return err
	}
	var known []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) { known = append(known, f.Name) })
	given, _, _ := strings.Cut(strings.TrimPrefix(msg, prefix), "=")
	if s := didyoumean.Suggest(given, known); s != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, s)
	}
	return err
}
