package k8senv

import "syscall"

// sysProcAttr puts a process in a group of its own and has the kernel kill
// it when the test process dies without calling Close.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
