package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are set at build time with
// -ldflags "-X main.version=v1.2.3 -X main.commit=abc123";
// otherwise they are read from the module's build information.
var (
	version = ""
	commit  = ""
)

func init() { commands = append(commands, newVersionCmd) }

// buildVersion returns the version and commit of this binary.
func buildVersion() (ver, rev string) {
	ver, rev = version, commit
	if bi, ok := debug.ReadBuildInfo(); ok {
		if ver == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			ver = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && rev == "" {
				rev = s.Value
			}
		}
	}
	if ver == "" {
		ver = "dev"
	}
	if rev == "" {
		rev = "unknown"
	}
	return ver, rev
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ver, rev := buildVersion()
			fmt.Fprintf(cmd.OutOrStdout(), "tokenpulse %s (commit %s, %s %s/%s)\n", ver, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
