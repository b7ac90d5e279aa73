// Package metrics samples the host (/proc, statfs) and processes for MetricsReport.
package metrics

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// MaxInterfaces is the most interfaces reported per node: each costs two series.
const MaxInterfaces = 4

// HostSample is the host part of a MetricsReport.
type HostSample struct {
	CPU, Mu, Mt, Du, Dt int64
	Net                 []protocol.NetInterface
}

// HostSampler reads host gauges; the first CPU reading covers the time since boot.
type HostSampler struct {
	diskPath string
	procDir  string
	previous cpuTimes
}

// NewHostSampler samples the filesystem holding diskPath (the agent's state dir).
func NewHostSampler(diskPath string) *HostSampler {
	return &HostSampler{diskPath: diskPath, procDir: "/proc"}
}

// Sample reads /proc/stat, /proc/meminfo, /proc/net/dev and the disk. A part that cannot be read
// is reported as zero rather than losing the whole report.
func (h *HostSampler) Sample() (HostSample, error) {
	var sample HostSample
	var problems []error
	if text, err := os.ReadFile(h.procDir + "/stat"); err == nil {
		now, err := parseCPU(string(text))
		if err == nil {
			busy, total := now.busy-h.previous.busy, now.total-h.previous.total
			h.previous = now
			if total > 0 {
				sample.CPU = min(1000, max(0, (busy*1000+total/2)/total))
			}
		}
		problems = append(problems, err)
	} else {
		problems = append(problems, err)
	}
	if text, err := os.ReadFile(h.procDir + "/meminfo"); err == nil {
		sample.Mu, sample.Mt = parseMemory(string(text))
	} else {
		problems = append(problems, err)
	}
	if text, err := os.ReadFile(h.procDir + "/net/dev"); err == nil {
		sample.Net = parseNetDev(string(text))
	} else {
		sample.Net = []protocol.NetInterface{}
		problems = append(problems, err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(h.diskPath, &fs); err == nil {
		sample.Du = int64(fs.Blocks-fs.Bfree) * int64(fs.Bsize)
		sample.Dt = int64(fs.Blocks) * int64(fs.Bsize)
	} else {
		problems = append(problems, fmt.Errorf("statfs %s: %w", h.diskPath, err))
	}
	return sample, errors.Join(problems...)
}

type cpuTimes struct{ busy, total int64 }

// parseCPU sums the aggregate "cpu" line: busy is everything but idle and iowait.
func parseCPU(procStat string) (cpuTimes, error) {
	for _, line := range strings.Split(procStat, "\n") {
		if !strings.HasPrefix(line, "cpu ") {
			continue
		}
		fields := strings.Fields(line)[1:]
		var total, idle int64
		for i, field := range fields {
			if i >= 8 {
				break
			}
			value, _ := strconv.ParseInt(field, 10, 64)
			total += value
			if i == 3 || i == 4 {
				idle += value
			}
		}
		return cpuTimes{busy: total - idle, total: total}, nil
	}
	return cpuTimes{}, errors.New("/proc/stat has no aggregate cpu line")
}

// parseMemory returns used (MemTotal − MemAvailable) and total, bytes.
func parseMemory(meminfo string) (used, total int64) {
	field := func(name string) int64 {
		for _, line := range strings.Split(meminfo, "\n") {
			if rest, ok := strings.CutPrefix(line, name+":"); ok {
				fields := strings.Fields(rest)
				if len(fields) > 0 {
					value, _ := strconv.ParseInt(fields[0], 10, 64)
					return value * 1024
				}
			}
		}
		return 0
	}
	total = field("MemTotal")
	return max(0, total-field("MemAvailable")), total
}

// parseNetDev returns cumulative bytes per interface, lo skipped, the first MaxInterfaces by name
// (name order keeps the chosen interfaces, and so the series, stable).
func parseNetDev(netdev string) []protocol.NetInterface {
	interfaces := []protocol.NetInterface{}
	lines := strings.Split(netdev, "\n")
	for i, line := range lines {
		if i < 2 {
			continue
		}
		name, rest, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || name == "lo" {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) < 9 {
			continue
		}
		rx, _ := strconv.ParseInt(fields[0], 10, 64)
		tx, _ := strconv.ParseInt(fields[8], 10, 64)
		if len(name) > 32 {
			name = name[:32]
		}
		interfaces = append(interfaces, protocol.NetInterface{If: name, Rx: rx, Tx: tx})
	}
	sort.Slice(interfaces, func(a, b int) bool { return interfaces[a].If < interfaces[b].If })
	if len(interfaces) > MaxInterfaces {
		interfaces = interfaces[:MaxInterfaces]
	}
	return interfaces
}
