//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
)

// errNotLinux is returned where containment is not built.
var errNotLinux = errors.New("rein run contains commands on Linux only (macOS and Windows: see docs/containment.md)")

// Detect finds nothing to contain with outside Linux.
func Detect() Features { return Features{} }

// Command refuses: containment is built on Linux only.
func Command(Spec, Features, Walls) (*exec.Cmd, error) { return nil, errNotLinux }

// Init is never run outside Linux.
func Init(string) int {
	fmt.Fprintln(os.Stderr, errNotLinux)
	return 2
}

// ReceiveNotify is never called outside Linux.
func ReceiveNotify(*net.UnixListener) (int, error) { return -1, errNotLinux }

// Serve is never called outside Linux.
func (s *Supervisor) Serve(context.Context, int) {}

// LimitsCommand is the hidden command of a contained run's limits.
const LimitsCommand = "sandbox-limits"

// ExecLimited is never run outside Linux.
func ExecLimited([]string) int {
	fmt.Fprintln(os.Stderr, errNotLinux)
	return 2
}
