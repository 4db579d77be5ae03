package suite

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// builtins holds the suites shipped in the binary, one file per suite,
// named after the suite.
//
//go:embed suites/*.yaml
var builtins embed.FS

// Names returns the names of the builtin suites, sorted.
func Names() []string {
	entries, err := fs.ReadDir(builtins, "suites")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".yaml"); ok && !e.IsDir() {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Builtin returns a fresh copy of the builtin suite called name; its
// Source is "builtin:NAME". An unknown name gives an error wrapping
// ErrNotFound.
func Builtin(name string, opts ...Option) (*Suite, error) {
	if !isBuiltin(name) {
		return nil, fmt.Errorf("suite %q is not a builtin (%s): %w", name, strings.Join(Names(), ", "), ErrNotFound)
	}
	data, err := builtins.ReadFile("suites/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("read builtin suite %q: %w", name, err)
	}
	return Parse("builtin:"+name, data, opts...)
}

// Resolve loads a builtin suite by name or a suite file by path. An
// argument that looks like a path (it holds a path separator or ends in
// .yaml or .yml) is always read as a file; otherwise a builtin name wins
// over a file of the same name in the working directory.
func Resolve(nameOrPath string, opts ...Option) (*Suite, error) {
	if !looksLikePath(nameOrPath) {
		if isBuiltin(nameOrPath) {
			return Builtin(nameOrPath, opts...)
		}
		if _, err := os.Stat(nameOrPath); err != nil {
			return nil, fmt.Errorf("suite %q is neither a builtin (%s) nor a file: %w", nameOrPath, strings.Join(Names(), ", "), ErrNotFound)
		}
	}
	return Load(nameOrPath, opts...)
}

func isBuiltin(name string) bool {
	for _, n := range Names() {
		if n == name {
			return true
		}
	}
	return false
}

func looksLikePath(s string) bool {
	ext := strings.ToLower(filepath.Ext(s))
	return strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) || ext == ".yaml" || ext == ".yml"
}

// IsFile reports whether Resolve reads nameOrPath as a file rather than
// as a builtin suite.
func IsFile(nameOrPath string) bool { return looksLikePath(nameOrPath) || !isBuiltin(nameOrPath) }
