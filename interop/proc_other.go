//go:build !unix

package interop

import (
	"os/exec"
	"syscall"
)

// groupAttr: outside unix the peers (which only run inside the Linux
// namespace of interop/netns) get no process group.
func groupAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the peer process itself.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
