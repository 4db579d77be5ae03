package suite

import (
	"errors"
	"fmt"
)

// ErrNotFound is returned (wrapped) by Builtin and Resolve for a name that
// is neither a builtin suite nor, for Resolve, a file.
var ErrNotFound = errors.New("no such suite")

// Error is one problem in a suite file, located by file, line and field:
//
//	suites/x.yaml:12: categories[1].weight: must be > 0
//
// Field paths name list items by index: "categories[0].prompts[3].id".
type Error struct {
	// File is the file name given to Load or Parse ("builtin:NAME" for a
	// builtin suite).
	File string
	// Line is the 1-based line of the offending value; 0 when unknown.
	Line int
	// Field is the path of the offending value, empty for the whole file.
	Field string
	// Msg says what is wrong.
	Msg string
	// Err is the underlying cause, if any (for instance the threshold
	// validator's error); it is reachable with errors.Is and errors.As.
	Err error
}

// Error formats the error as "file:line: field: message".
func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }
