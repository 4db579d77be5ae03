//go:build !unix

package pgtest

import "os/exec"

// asPostgres leaves cmd as it is: only Unix systems have a postgres user
// to switch to.
func asPostgres(cmd *exec.Cmd) *exec.Cmd { return cmd }

// chownToPostgres does nothing off Unix.
func chownToPostgres(string) error { return nil }
