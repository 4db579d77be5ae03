package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/api"
	"github.com/tokenpulse/tokenpulse/runfile"
)

type embeddedFlags struct{}

func (e *embeddedFlags) register(fl *pflag.FlagSet) {}

type embeddedTarget struct {
	target    runfile.Target
	coldStart *runfile.ColdStart
	close     func()
}

func startEmbedded(ctx context.Context, f embeddedFlags) (*embeddedTarget, error) {
	return nil, errors.New("not yet")
}

func coldStartFrom(w *api.Warmup) *runfile.ColdStart { return nil }
