package main

import (
	"strings"
	"testing"
)

// TestUnknownFlagSuggests: a mistyped flag is answered with the flag it
// most likely meant, as a mistyped subcommand is; exit 2 either way.
func TestUnknownFlagSuggests(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--reqests", "5"}, "did you mean --requests?"},
		{[]string{"bench", "--concurency=2"}, "did you mean --concurrency?"},
		{[]string{"serve", "--api-key-evn", "K"}, "did you mean --api-key-env?"},
	} {
		text, code := cliRun(t, c.args...)
		if code != exitUsage || !strings.Contains(text, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, code, text, exitUsage, c.want)
		}
	}
	if text, code := cliRun(t, "bench", "--zzzzzz"); code != exitUsage || strings.Contains(text, "did you mean") {
		t.Errorf("no flag is near --zzzzzz: exit %d, %q", code, text)
	}
}
