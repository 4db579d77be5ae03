// Package limits holds the bounds on a llama-family model's
// hyperparameters that the engine accepts from a model file (which is not
// trusted: each value is checked before anything is sized from it), and
// that package synth holds the models it writes to.
package limits

// The largest hyperparameters a model may have.
const (
	// MaxDim bounds the embedding width (and a head's size).
	MaxDim = 1 << 16
	// MaxLayers bounds the transformer blocks.
	MaxLayers = 1 << 10
	// MaxHeads bounds the query and key/value heads.
	MaxHeads = 1 << 10
	// MaxFFN bounds the feed-forward hidden width.
	MaxFFN = 1 << 18
	// MaxVocab bounds the vocabulary.
	MaxVocab = 1 << 21
	// MaxCtx bounds the context length.
	MaxCtx = 1 << 20
)
