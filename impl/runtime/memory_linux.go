package runtime

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// mappedMemory sums, over this process's mappings of the file at path, the
// resident bytes and the dirty bytes (Private_Dirty + Shared_Dirty) from
// /proc/self/smaps. G5 asks for the latter to be about zero after finalize:
// msync(MS_SYNC) cleans written pages, MS_ASYNC does not on Linux. A file
// replaced by rename keeps its mappings under "path (deleted)".
func mappedMemory(path string) (rss, dirty int64, ok bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, 0, false
	}
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, 0, false
	}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") {
			// A mapping header: range perms offset dev inode [path].
			in = len(fields) >= 6 && strings.TrimSuffix(strings.Join(fields[5:], " "), " (deleted)") == abs
			continue
		}
		if !in || len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "Rss:":
			rss += kb << 10
		case "Private_Dirty:", "Shared_Dirty:":
			dirty += kb << 10
		}
	}
	return rss, dirty, true
}
