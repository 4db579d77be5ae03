package adbstub

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Install builds the stand-in as dir/adb, writes script to
// dir/script.json (its root, when empty, is dir/devices) and returns the
// environment a command needs to find it first on PATH: PATH and
// $ADBSTUB_SCRIPT, as "KEY=VALUE" pairs.
func Install(dir string, script *Script) ([]string, error) {
	if script.Root == "" {
		script.Root = filepath.Join(dir, "devices")
	}
	if err := os.MkdirAll(script.Root, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "script.json")
	if err := script.Write(path); err != nil {
		return nil, err
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "adb"), "github.com/tokenpulse/tokenpulse/internal/adbstub/cmd/adb")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the stand-in adb: %v\n%s", err, out)
	}
	return []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), ScriptEnv + "=" + path}, nil
}
