package crashfs

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/xpwc/xpwc/impl/vfs"
)

// TestScenarios replays testdata/* with datadriven: readable transcripts of
// what each crash keeps. Rewrite expectations with -rewrite after checking
// the diff by hand.
//
//	mkdir DIR
//	create NAME              open with O_CREATE (handle named NAME)
//	write NAME OFF TEXT      WriteAt
//	truncate NAME SIZE
//	sync NAME | syncdir DIR
//	rename OLD NEW | remove NAME
//	map ID NAME OFF LEN [ro] a mapping named ID
//	store ID OFF TEXT        a store into the mapping's memory
//	msync ID
//	crash-after N            SetCrashAfter(N)
//	process-crash            replace the FS by ProcessCrash()
//	power-loss keep=P seed=S replace the FS by PowerLossWith
//	outcomes max=M           list the distinct power-loss outcomes
//	ls                       every file and its content
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var fs *FS
		files := map[string]vfs.File{}
		maps := map[string]vfs.Mapping{}
		reset := func(n *FS) {
			fs = n
			files = map[string]vfs.File{}
			maps = map[string]vfs.Mapping{}
		}
		reset(New(Options{}))
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			a := func(i int) string {
				if i >= len(d.CmdArgs) {
					d.Fatalf(t, "%s: missing argument %d", d.Cmd, i)
				}
				return d.CmdArgs[i].Key
			}
			num := func(i int) int64 {
				n, err := strconv.ParseInt(a(i), 10, 64)
				if err != nil {
					d.Fatalf(t, "%s: %v", d.Cmd, err)
				}
				return n
			}
			res := func(err error) string {
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				return "ok\n"
			}
			switch d.Cmd {
			case "mkdir":
				return res(fs.MkdirAll(a(0)))
			case "create":
				f, err := fs.OpenFile(a(0), os.O_RDWR|os.O_CREATE, 0o644)
				if err == nil {
					files[a(0)] = f
				}
				return res(err)
			case "write":
				_, err := files[a(0)].WriteAt([]byte(a(2)), num(1))
				return res(err)
			case "truncate":
				return res(files[a(0)].Truncate(num(1)))
			case "sync":
				return res(files[a(0)].Sync())
			case "syncdir":
				return res(fs.SyncDir(a(0)))
			case "rename":
				return res(fs.Rename(a(0), a(1)))
			case "remove":
				return res(fs.Remove(a(0)))
			case "map":
				prot := vfs.ProtReadWrite
				if d.HasArg("ro") {
					prot = vfs.ProtRead
				}
				m, err := files[a(1)].Map(num(2), int(num(3)), prot)
				if err == nil {
					maps[a(0)] = m
				}
				return res(err)
			case "store":
				copy(maps[a(0)].Bytes()[num(1):], a(2))
				return "ok\n"
			case "msync":
				return res(maps[a(0)].Sync())
			case "crash-after":
				fs.SetCrashAfter(int(num(0)))
				return "ok\n"
			case "process-crash":
				reset(fs.ProcessCrash())
				return "ok\n"
			case "power-loss":
				var keep float64
				var seed uint64
				d.ScanArgs(t, "keep", &keep)
				d.ScanArgs(t, "seed", &seed)
				reset(fs.PowerLossWith(LossConfig{Seed: seed, Keep: keep}))
				return "ok\n"
			case "outcomes":
				var max int
				d.ScanArgs(t, "max", &max)
				seen := map[string]bool{}
				for o := range fs.PowerLossOutcomes(max, 1) {
					seen[describe(o)] = true
				}
				var out []string
				for s := range seen {
					out = append(out, s)
				}
				sort.Strings(out)
				return fmt.Sprintf("%d distinct:\n%s", len(out), strings.Join(out, "--\n"))
			case "ls":
				return describe(fs)
			}
			d.Fatalf(t, "unknown command %s", d.Cmd)
			return ""
		})
	})
}

// describe lists the files of f with their contents; runs of zero bytes
// print as <0×N>.
func describe(f *FS) string {
	all := f.Files()
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", n, squeeze(all[n]))
	}
	if b.Len() == 0 {
		return "(no files)\n"
	}
	return b.String()
}

func squeeze(data []byte) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(data); {
		if data[i] != 0 {
			b.WriteByte(data[i])
			i++
			continue
		}
		j := i
		for j < len(data) && data[j] == 0 {
			j++
		}
		fmt.Fprintf(&b, "<0×%d>", j-i)
		i = j
	}
	b.WriteByte('"')
	return b.String()
}
