package engine

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// systemAvailableMemory reads MemAvailable from /proc/meminfo (what the
// kernel estimates can be allocated without swapping), lowered to what
// the process's cgroup still allows, as in a container, and to what its
// address-space limit (ulimit -v) leaves, when those are smaller.
func systemAvailableMemory() (uint64, string, bool) {
	avail, ok := meminfoAvailable()
	src := "MemAvailable"
	if lim, ok2 := cgroupRoom(); ok2 && (!ok || lim < avail) {
		avail, ok, src = lim, true, "the cgroup's memory limit less its usage"
	}
	if lim, ok2 := addressSpaceRoom(); ok2 && (!ok || lim < avail) {
		avail, ok, src = lim, true, "ulimit -v less the address space in use"
	}
	return avail, src, ok
}

// addressSpaceRoom returns RLIMIT_AS (ulimit -v) less the process's
// VmSize, when the limit is set.
func addressSpaceRoom() (uint64, bool) {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_AS, &rl); err != nil || rl.Cur == unix.RLIM_INFINITY {
		return 0, false
	}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	var used uint64
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmSize:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				kb, _ := strconv.ParseUint(f[0], 10, 64)
				used = kb << 10
			}
		}
	}
	if used >= rl.Cur {
		return 0, true
	}
	return rl.Cur - used, true
}

func meminfoAvailable() (uint64, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

// cgroupRoom returns what the process's cgroup still allows it (limit
// less usage), when the cgroup has a limit: memory.max and memory.current
// under cgroup v2, memory.limit_in_bytes and memory.usage_in_bytes under
// v1.
func cgroupRoom() (uint64, bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			if room, ok := cgroupFiles("/sys/fs/cgroup"+p, "memory.max", "memory.current"); ok {
				return room, true
			}
		}
		if _, rest, ok := strings.Cut(line, ":memory:"); ok {
			if room, ok := cgroupFiles("/sys/fs/cgroup/memory"+rest, "memory.limit_in_bytes", "memory.usage_in_bytes"); ok {
				return room, true
			}
		}
	}
	return 0, false
}

func cgroupFiles(dir, limitFile, usageFile string) (uint64, bool) {
	read := func(name string) (uint64, bool) {
		b, err := os.ReadFile(dir + "/" + name)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil
	}
	limit, ok := read(limitFile) // v2 says "max" when unlimited: not a number
	if !ok || limit >= 1<<62 {   // v1 says about 2^63 when unlimited
		return 0, false
	}
	used, _ := read(usageFile)
	if used >= limit {
		return 0, true
	}
	return limit - used, true
}
