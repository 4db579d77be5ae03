package engine

import (
	"fmt"
	"strings"
)

// KVType is the element type of a session's KV cache.
type KVType string

// The KV cache types. KVF16 halves the cache (and the memory bandwidth of
// attention over a long context) at the cost of rounding every cached key
// and value to binary16, as llama.cpp's default f16 cache does.
const (
	KVF32 KVType = "f32" // float32, exact; the default ("" means it too)
	KVF16 KVType = "f16" // IEEE binary16
)

// ParseKVType parses "f32" or "f16" (any case); "" is KVF32.
func ParseKVType(s string) (KVType, error) {
	switch t := KVType(strings.ToLower(strings.TrimSpace(s))); t {
	case "", KVF32:
		return KVF32, nil
	case KVF16:
		return KVF16, nil
	}
	return "", fmt.Errorf("engine: KV cache type %q: want f32 or f16: %w", s, ErrOption)
}

// elemBytes is the size of one cached element.
func (t KVType) elemBytes() int {
	if t == KVF16 {
		return 2
	}
	return 4
}

// String returns "f32" or "f16".
func (t KVType) String() string {
	if t == "" {
		return string(KVF32)
	}
	return string(t)
}
