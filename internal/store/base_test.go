package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/tokenpulse/tokenpulse/runfile"
)

func TestCheckAgainst(t *testing.T) {
	for s, ok := range map[string]bool{"last": true, "12": true, "Last": false, "": false, "1.5": false} {
		if err := CheckAgainst(s); (err == nil) != ok {
			t.Errorf("CheckAgainst(%q) = %v", s, err)
		}
	}
}

// TestFindBaseWithoutHistory: no history yet is no base, said as such,
// and no file is created to say so.
func TestFindBaseWithoutHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.db")
	cur := &runfile.Run{Target: runfile.Target{URL: "http://127.0.0.1:1", Model: "m"}}
	_, err := FindBase(context.Background(), path, Last, false, cur, 1)
	var none *NoBase
	if !errors.As(err, &none) {
		t.Fatalf("err = %v, want a *NoBase", err)
	}
	if _, err := FindBase(context.Background(), path, "x", false, cur, 1); err == nil || errors.As(err, &none) {
		t.Errorf("a malformed --against: %v", err)
	}
}
