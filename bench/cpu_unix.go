//go:build unix

package bench

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTicks is USER_HZ, the unit of /proc/stat (100 on every Linux
// architecture Go supports).
const clockTicks = 100

// cpuTimes is the machine's CPU time from /proc/stat's "cpu" line, in
// clock ticks: all of it, and the idle part (idle and iowait).
type cpuTimes struct{ total, idle uint64 }

// machineCPU reads /proc/stat; zero where there is none.
func machineCPU() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(string(v), 10, 64)
		if i < 8 { // user nice system idle iowait irq softirq steal; guest is within user
			t.total += n
		}
		if i == 3 || i == 4 {
			t.idle += n
		}
	}
	return t
}

// busySince is the share of CPU time not idle between s and t, in percent;
// -1 when it cannot be told.
func (t cpuTimes) busySince(s cpuTimes) float64 {
	if s.total == 0 || t.total <= s.total {
		return -1
	}
	return 100 * (1 - float64(t.idle-s.idle)/float64(t.total-s.total))
}
