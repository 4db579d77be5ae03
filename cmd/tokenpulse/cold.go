package main

import "github.com/spf13/pflag"

// coldAsked is --cold when given, nil when not (runner.ColdByDefault
// decides then).
func (f *benchFlags) coldAsked(fs *pflag.FlagSet) *bool {
	if !fs.Changed("cold") {
		return nil
	}
	return &f.cold
}
