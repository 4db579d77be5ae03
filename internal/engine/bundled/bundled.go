// Package bundled embeds tokenpulse's default model, stories260K (a
// 260-thousand-parameter llama trained on TinyStories by Andrej Karpathy,
// MIT licence; see README.md), so that the engine answers on a fresh
// machine with nothing downloaded.
//
//	f, err := gguf.Parse(bundled.Model)
//
// Model is read-only data and safe for concurrent use; it must not be
// modified.
package bundled

import _ "embed"

// Model is the GGUF file of stories260K, all tensors F32.
//
//go:embed stories260K.gguf
var Model []byte

// Name is the file name of the bundled model.
const Name = "stories260K.gguf"

// TrainedContext is the context stories260K was trained with: seq_len 512
// in its llama2.c checkpoint header. The GGUF file says 128 only because
// llama.cpp's llama2.c converter writes that value for every model it
// converts (see README.md here and internal/fixture/testdata/models/README.md), so the
// engine uses this value for the bundled model instead.
const TrainedContext = 512
