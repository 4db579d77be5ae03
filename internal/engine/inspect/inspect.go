// Package inspect describes a GGUF model file without loading it for
// inference (tokenpulse model info): its metadata, its tensors by type,
// and the hyperparameters the engine would read from it, or why the
// engine would refuse it.
package inspect

import (
	"sort"

	"github.com/tokenpulse/tokenpulse/internal/engine"
	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
)

// Info describes a GGUF model file without loading it for inference.
type Info struct {
	Version    uint32         `json:"gguf_version"`
	Arch       string         `json:"arch"`
	Name       string         `json:"name"`
	Params     uint64         `json:"params"` // elements of the tensors in the file (which share no bytes)
	CtxTrain   uint64         `json:"context_length"`
	Vocab      int            `json:"vocab"`      // tokenizer.ggml.tokens
	Tokenizer  string         `json:"tokenizer"`  // tokenizer.ggml.model
	FileBytes  int64          `json:"file_bytes"` // size of the file
	Types      []TypeUsage    `json:"types"`      // per tensor type, most bytes first
	Tensors    int            `json:"tensors"`
	Config     *engine.Config `json:"config,omitempty"`       // nil when not a supported model
	ConfigErr  string         `json:"config_error,omitempty"` // why Config is nil
	KVCount    int            `json:"metadata_keys"`
	Alignments int            `json:"alignment"`
}

// TypeUsage is how much of a file one tensor type takes.
type TypeUsage struct {
	Type    string `json:"type"`
	Tensors int    `json:"tensors"`
	Params  uint64 `json:"params"`
	Bytes   uint64 `json:"bytes"`
}

// File describes the parsed file f.
func File(f *gguf.File) Info {
	fi := Info{Version: f.Version, FileBytes: f.Size, Tensors: len(f.Tensors), KVCount: len(f.KV), Alignments: f.Alignment}
	fi.Arch, _ = f.String("general.architecture")
	fi.Name, _ = f.String("general.name")
	fi.CtxTrain, _ = f.Uint(fi.Arch + ".context_length")
	toks, _ := f.Strings("tokenizer.ggml.tokens")
	fi.Vocab = len(toks)
	fi.Tokenizer, _ = f.String("tokenizer.ggml.model")
	byType := map[string]*TypeUsage{}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		n := t.Type.String()
		u := byType[n]
		if u == nil {
			u = &TypeUsage{Type: n}
			byType[n] = u
		}
		u.Tensors++
		u.Params += t.Elements()
		u.Bytes += uint64(len(t.Data))
		fi.Params += t.Elements()
	}
	for _, u := range byType {
		fi.Types = append(fi.Types, *u)
	}
	sort.Slice(fi.Types, func(i, j int) bool {
		if fi.Types[i].Bytes != fi.Types[j].Bytes {
			return fi.Types[i].Bytes > fi.Types[j].Bytes
		}
		return fi.Types[i].Type < fi.Types[j].Type
	})
	c, err := engine.FileConfig(f)
	if err == nil {
		fi.Config = &c
	} else {
		fi.ConfigErr = err.Error()
	}
	return fi
}
