package metrics

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicksPerSecond is USER_HZ for /proc CPU times (100 on every mainstream Linux).
const clockTicksPerSecond = 100

// ProcessSample is one process's CPU time and resident memory.
type ProcessSample struct {
	CPU time.Duration
	RSS int64
	// StartTicks is the process's start time since boot (field 22): with the pid it names one
	// process, never a later one that reused the pid.
	StartTicks int64
}

// SampleProcess reads /proc/<pid>/stat and status; an error when the process is gone.
func SampleProcess(pid int) (ProcessSample, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcessSample{}, err
	}
	sample, err := parseStat(string(stat))
	if err != nil {
		return ProcessSample{}, err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcessSample{}, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				kib, _ := strconv.ParseInt(fields[0], 10, 64)
				sample.RSS = kib * 1024
			}
		}
	}
	return sample, nil
}

// parseStat reads utime, stime and starttime; the command name (field 2) may hold spaces and
// parentheses, so fields are counted after the last ")".
func parseStat(stat string) (ProcessSample, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 || end+2 > len(stat) {
		return ProcessSample{}, fmt.Errorf("malformed /proc stat %q", stat)
	}
	fields := strings.Fields(stat[end+2:])
	// After the name: state is field 3, so field N is fields[N-3].
	if len(fields) < 20 {
		return ProcessSample{}, fmt.Errorf("malformed /proc stat %q", stat)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	start, _ := strconv.ParseInt(fields[19], 10, 64)
	return ProcessSample{
		CPU:        time.Duration(utime+stime) * time.Second / clockTicksPerSecond,
		StartTicks: start,
	}, nil
}

// CPUPerMille is the per mille of one core used between two readings elapsed apart.
func CPUPerMille(before, after, elapsed time.Duration) int64 {
	if elapsed <= 0 || after < before {
		return 0
	}
	return int64((after - before) * 1000 / elapsed)
}
