package runner

import (
	"path/filepath"
	"testing"
	"time"
)

// TestMakeDirNeverShares: two runs started in the same second get
// directories of their own.
func TestMakeDirNeverShares(t *testing.T) {
	t.Chdir(t.TempDir())
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a, err := MakeDir("", at)
	if err != nil {
		t.Fatal(err)
	}
	b, err := MakeDir("", at)
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Base(a) != "20260102-030405" || filepath.Base(b) != "20260102-030405-2" {
		t.Errorf("directories %s and %s", a, b)
	}
}

func TestLagLimit(t *testing.T) {
	if got := LagLimit(50); got != 10*time.Millisecond {
		t.Errorf("at 50/s: %v, want 10ms", got)
	}
	if got := LagLimit(200); got != 5*time.Millisecond {
		t.Errorf("at 200/s: %v, want 1/R = 5ms", got)
	}
	if !Behind(200, 5.1) || Behind(200, 5) {
		t.Error("Behind at 200/s: want above 5 ms only")
	}
}
