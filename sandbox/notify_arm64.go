//go:build linux && arm64

package sandbox

import "golang.org/x/sys/unix"

// nativeArch is the audit architecture of this build's system calls.
const nativeArch = unix.AUDIT_ARCH_AARCH64

// x32Bit is amd64's alone.
const x32Bit = 0

// legacyCalls: arm64 has only the generic calls.
var legacyCalls = map[int]call{}
