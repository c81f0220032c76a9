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

// SeedHome has nothing to seed outside Linux.
func SeedHome(string) error { return errNotLinux }

// Handoff is never made outside Linux.
type Handoff struct{ Notify int }

// Receive is never called outside Linux.
func Receive(*net.UnixListener, Spec) (*Handoff, error) { return nil, errNotLinux }

// Close has nothing to close outside Linux.
func (h *Handoff) Close() {}

// Serve is never called outside Linux.
func (s *Supervisor) Serve(context.Context, int) {}
