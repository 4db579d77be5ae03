package gguf

import "fmt"

// parseOwned parses data that belongs to the returned File, releasing it
// with release when parsing fails or the File is closed.
func parseOwned(path string, data []byte, release func() error) (*File, error) {
	f, err := Parse(data)
	if err != nil {
		if release != nil {
			release()
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = release
	return f, nil
}
