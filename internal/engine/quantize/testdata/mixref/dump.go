// Command dump prints a GGUF file's tensor types and the sha256 of each
// tensor's stored bytes as JSON, for mixref.sh. It lives under testdata
// so the go tool's ./... patterns do not build it.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"

	"github.com/tokenpulse/tokenpulse/internal/engine/gguf"
)

func main() {
	f, err := gguf.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer f.Close()
	types, sums := map[string]string{}, map[string]string{}
	for _, t := range f.Tensors {
		types[t.Name] = t.Type.String()
		s := sha256.Sum256(t.Data)
		sums[t.Name] = hex.EncodeToString(s[:])
	}
	ft, _ := f.Uint("general.file_type")
	json.NewEncoder(os.Stdout).Encode(map[string]any{"general_file_type": ft, "tensor_types": types, "tensor_sha256": sums})
}
