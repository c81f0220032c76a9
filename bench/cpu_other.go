//go:build !unix

package bench

import "time"

// processCPU is not measured on this system.
func processCPU() time.Duration { return 0 }

const clockTicks = 100

type cpuTimes struct{ total, idle uint64 }

func machineCPU() cpuTimes { return cpuTimes{} }

func (t cpuTimes) busySince(s cpuTimes) float64 { return -1 }
