#!/bin/bash
# ceiling.sh SIMRUN [ROUNDS=6] [explore flags, default --sources 2]
# The machine's ceiling for two workers: per round, one `explore --workers 1`
# alone (a), then two independent copies at once (b, c; nothing shared).
# Per round: summed throughput of the two copies relative to one alone,
# a/b + a/c (what two dynamically balanced workers could reach), and the
# static-halves figure 2a/max(b,c); CPU of each (user+sys). Then medians.
bin=${1:?simrun binary}; n=${2:-6}; shift 2 2>/dev/null
flags=${*:---sources 2}
t=$(mktemp -d)
run() { /usr/bin/time -f "%e %U %S" -o $t/$1.t "$bin" explore --json --quiet $flags --workers 1 > $t/$1.j || exit 1; }
echo "# $(date -u +%FT%TZ) $bin rounds=$n flags=$flags load: $(cat /proc/loadavg)"
for i in $(seq $n); do
  run a
  run b & run c; wait
  python3 - $t <<'PY'
import json, sys
t = sys.argv[1]
r = {}
for k in "abc":
    j = json.load(open(f"{t}/{k}.j"))
    wall, u, s = map(float, open(f"{t}/{k}.t").read().split()[-3:])
    r[k] = (j["states"], j["seconds"], u + s)
assert r["a"][0] == r["b"][0] == r["c"][0]
a, b, c = r["a"][1], r["b"][1], r["c"][1]
print("round states=%d alone %.2f s cpu %.2f | pair %.2f %.2f s cpu %.2f %.2f | summed %.3f static %.3f" % (
    r["a"][0], a, r["a"][2], b, c, r["b"][2], r["c"][2], a / b + a / c, 2 * a / max(b, c)))
PY
done | tee $t/log
python3 - $t/log <<'PY'
import re, statistics, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("round")]
for key in ("summed", "static"):
    v = [float(re.search(key + r" ([0-9.]+)", l).group(1)) for l in rows]
    print("median %-6s %.3f  (min %.3f max %.3f, n=%d)" % (key, statistics.median(v), min(v), max(v), len(v)))
PY
echo "# end load: $(cat /proc/loadavg)"
rm -rf $t
