package cpu

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// defaultMemoryLimit is three quarters of the machine's memory, read from
// /proc/meminfo; 0 (no limit) where that is not available.
func defaultMemoryLimit() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024 / 4 * 3
		}
	}
	return 0
}
