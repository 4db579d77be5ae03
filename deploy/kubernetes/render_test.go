package kubernetes

import "os/exec"

// runRender runs ./render.sh params.env.
func runRender() ([]byte, error) {
	return exec.Command("/bin/sh", "./render.sh", "params.env").CombinedOutput()
}
