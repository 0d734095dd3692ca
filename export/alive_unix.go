//go:build unix

package export

import (
	"errors"
	"syscall"
)

// alive reports whether a process with this id runs: signal 0 checks
// without sending anything. A process of another user counts as alive.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
