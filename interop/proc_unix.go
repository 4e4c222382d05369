//go:build unix

package interop

import (
	"os/exec"
	"syscall"
)

// groupAttr starts a peer in a process group of its own, so that Kill
// reaches the programs it starts too.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup sends SIGKILL to the process group of cmd.
func killGroup(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
