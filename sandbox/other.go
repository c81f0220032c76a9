//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
)

// Detect finds nothing to contain with outside Linux.
func Detect() Features { return Features{} }

// Command refuses: containment is built on Linux only.
func Command(Spec, Features, Walls) (*exec.Cmd, error) { return nil, errNotLinux }

// Init is never run outside Linux.
func Init(string) int {
	fmt.Fprintln(os.Stderr, errNotLinux)
	return 2
}
