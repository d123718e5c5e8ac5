#!/bin/bash
# multi.sh ROUNDS "FLAGS" BIN...: per round, for each binary in turn, one
# `explore --workers 1` then one `--workers 2` (alternated A1 A2 B1 B2 ...);
# per binary the median of w1/w2 search-seconds ratios and of CPU w2/w1.
n=$1; flags=$2; shift 2
t=$(mktemp -d)
echo "# $(date -u +%FT%TZ) rounds=$n flags=$flags load: $(cat /proc/loadavg)"
for i in $(seq $n); do for bin in "$@"; do
  for w in 1 2; do
    /usr/bin/time -f "%e %U %S" -o $t/t$w $bin explore --json --quiet $flags --workers $w > $t/j$w || exit 1
  done
  python3 - $t $(basename $bin) <<'PY' | tee -a $t/log
import json, sys
t, name = sys.argv[1], sys.argv[2]
r = {}
for w in (1, 2):
    j = json.load(open(f"{t}/j{w}"))
    wall, u, s = map(float, open(f"{t}/t{w}").read().split()[-3:])
    r[w] = (j["states"], j["seconds"], u + s)
assert r[1][0] == r[2][0], "states differ"
print("%s states=%d w1 %.2f s cpu %.2f | w2 %.2f s cpu %.2f | ratio %.3f cpu %.3f load %s" % (name, r[1][0], r[1][1], r[1][2], r[2][1], r[2][2], r[1][1] / r[2][1], r[2][2] / r[1][2], open("/proc/loadavg").read().split()[0]))
PY
done; done
python3 - $t/log "$@" <<'PY'
import re, statistics, sys, os
rows = open(sys.argv[1]).read().splitlines()
for b in sys.argv[2:]:
    n = os.path.basename(b)
    mine = [l for l in rows if l.split()[0] == n]
    rr = [float(re.search(r"ratio ([0-9.]+)", l).group(1)) for l in mine]
    cc = [float(re.search(r"cpu ([0-9.]+) load", l).group(1)) for l in mine]
    w2 = [float(re.search(r"w2 ([0-9.]+) s", l).group(1)) for l in mine]
    print("%-18s median w1/w2 %.3f (%.3f-%.3f)  cpu w2/w1 %.3f  w2 search median %.2f s  n=%d" % (n, statistics.median(rr), min(rr), max(rr), statistics.median(cc), statistics.median(w2), len(rr)))
PY
echo "# end load: $(cat /proc/loadavg)"
rm -rf $t
