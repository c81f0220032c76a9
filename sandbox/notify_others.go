//go:build linux && !amd64 && !arm64

package sandbox

// nativeArch 0: recording refused writes is not built for this
// architecture, and rein run refuses to start (it never runs unrecorded).
const nativeArch = 0

const x32Bit = 0

var legacyCalls = map[int]call{}
