package main

import (
	"github.com/spf13/pflag"

	"github.com/tokenpulse/tokenpulse/internal/launch"
)

// embeddedFlags configure the server bench starts when no --url is given.
type embeddedFlags struct {
	model    string
	ctx      int
	threads  int
	batch    int
	parallel int
}

func (e *embeddedFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&e.model, "model", "", "GGUF model for the embedded server (default: the bundled stories260K); ignored with --url")
	fl.IntVar(&e.ctx, "ctx", 0, "context size of the embedded server (default min(2048, the model's own); the bundled model's own is 512)")
	fl.IntVar(&e.threads, "threads", 0, "threads of the embedded engine (default: the number of cores less one, which is left to the measuring client)")
	fl.IntVar(&e.batch, "batch", 0, "prompt batch size of the embedded engine (default 32)")
	fl.IntVar(&e.parallel, "parallel", 1, "requests the embedded server generates at once (the rest queue)")
}

// engineModel is what the flags ask the embedded engine for.
func (e embeddedFlags) engineModel() launch.Model {
	return launch.Model{Path: e.model, Ctx: e.ctx, Threads: e.threads, Batch: e.batch, Parallel: e.parallel}
}
