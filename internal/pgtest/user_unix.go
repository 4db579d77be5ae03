//go:build unix

package pgtest

import (
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// postgresIDs returns the uid and gid of the postgres user when this
// process is root (PostgreSQL refuses to run as root), ok false otherwise.
func postgresIDs() (uid, gid uint32, ok bool) {
	if os.Geteuid() != 0 {
		return 0, 0, false
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return 0, 0, false
	}
	id, err1 := strconv.Atoi(u.Uid)
	g, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uint32(id), uint32(g), true
}

// asPostgres makes cmd run as the postgres user when we are root.
func asPostgres(cmd *exec.Cmd) *exec.Cmd {
	if uid, gid, ok := postgresIDs(); ok {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	}
	return cmd
}

// chownToPostgres gives dir to the postgres user when we are root.
func chownToPostgres(dir string) error {
	if uid, gid, ok := postgresIDs(); ok {
		return os.Chown(dir, int(uid), int(gid))
	}
	return nil
}
