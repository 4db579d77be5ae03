//go:build unix

// Package unwritable gives tests a real "permission denied": a directory
// that a process they start can read but not write, even when the tests
// run as root (where chmod stops nothing).
//
// As root, Command runs the process as the unprivileged user nobody
// (uid and gid 65534), which cannot write a directory root owns with mode
// 0755; otherwise Seal makes the directory 0555. Either way the process
// gets EACCES from the kernel, as on a read-only share.
//
// Example:
//
//	dir := unwritable.Dir(t)
//	// ... write the fixtures into dir ...
//	unwritable.Seal(t, dir)
//	cmd := unwritable.Command(t, os.Args[0], "history", "--history", filepath.Join(dir, "h.db"))
package unwritable

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// nobody is the unprivileged uid and gid a root test runs its process as.
const nobody = 65534

// Dir returns a new directory, removed after the test, that every user
// may read and enter (its parents too) and only the test may write.
func Dir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	// t.TempDir's parent is made 0700: open the way for nobody.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Seal makes dir unwritable to the process Command starts, until the
// test ends: as root nothing needs doing (that process is not root);
// otherwise dir becomes 0555.
func Seal(t testing.TB, dir string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
}

// Command returns the command exe args for a process that cannot write a
// sealed directory: as root, a copy of exe (which nobody may lack access
// to) run as nobody; otherwise exe as it is.
func Command(t testing.TB, exe string, args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		return exec.Command(exe, args...)
	}
	cp := filepath.Join(Dir(t), filepath.Base(exe))
	if err := copyFile(cp, exe); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cp, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	return cmd
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
