//go:build linux && amd64

package sandbox

import "golang.org/x/sys/unix"

// nativeArch is the audit architecture of this build's system calls.
const nativeArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks the x32 ABI's calls, which name files by other numbers.
const x32Bit = 0x40000000

// legacyCalls are the writing calls that amd64 has besides the generic ones.
var legacyCalls = map[int]call{
	unix.SYS_OPEN:    {op: "open", paths: []pathArg{{-1, 0}}, flags: 1, mode: 2},
	unix.SYS_CREAT:   {op: "open", paths: []pathArg{{-1, 0}}, flags: -1, mode: 1, fixed: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC},
	unix.SYS_RENAME:  {op: "rename", paths: []pathArg{{-1, 0}, {-1, 1}}, flags: -1, mode: -1},
	unix.SYS_UNLINK:  {op: "unlink", paths: []pathArg{{-1, 0}}, flags: -1, mode: -1},
	unix.SYS_RMDIR:   {op: "unlink", paths: []pathArg{{-1, 0}}, flags: -1, mode: -1},
	unix.SYS_MKDIR:   {op: "mkdir", paths: []pathArg{{-1, 0}}, flags: -1, mode: 1},
	unix.SYS_LINK:    {op: "link", paths: []pathArg{{-1, 1}}, flags: -1, mode: -1},
	unix.SYS_SYMLINK: {op: "symlink", paths: []pathArg{{-1, 1}}, flags: -1, mode: -1},
	unix.SYS_MKNOD:   {op: "mknod", paths: []pathArg{{-1, 0}}, flags: -1, mode: -1},
}
