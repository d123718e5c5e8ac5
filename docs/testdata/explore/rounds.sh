#!/bin/bash
# rounds.sh SIMRUN [ROUNDS=8] [explore flags, default --sources 2]
# Per round, in turn: one `explore --workers 1` alone, one `--workers 2`,
# then two independent `--workers 1` copies at once (nothing shared: the
# machine's ceiling for two workers in that round). Prints per round the
# search seconds and CPU (user+sys) of each; "ratio" is w1/w2 seconds and
# the "cpu" after it w2's CPU over w1's; "summed" is w1/first + w1/second,
# what two perfectly balanced workers could reach in the same round.
bin=${1:?simrun binary}; n=${2:-8}; shift 2 2>/dev/null
flags=${*:---sources 2}
t=$(mktemp -d)
run() { /usr/bin/time -f "%e %U %S" -o $t/$1.t "$bin" explore --json --quiet $flags --workers $2 > $t/$1.j || exit 1; }
echo "# $(date -u +%FT%TZ) $bin rounds=$n flags=$flags load: $(cat /proc/loadavg)"
for i in $(seq $n); do
  run a 1; run b 2
  run c 1 & run d 1; wait
  python3 - $t <<'PY'
import json, sys
t = sys.argv[1]
r = {}
for k in "abcd":
    j = json.load(open(f"{t}/{k}.j"))
    wall, u, s = map(float, open(f"{t}/{k}.t").read().split()[-3:])
    r[k] = (j["states"], j["seconds"], u + s)
assert len({v[0] for v in r.values()}) == 1, "states differ"
a, b, c, d = (r[k] for k in "abcd")
print("round states=%d w1 %.2f s cpu %.2f | w2 %.2f s cpu %.2f | ratio %.3f cpu %.3f | pair %.2f %.2f s cpu %.2f %.2f | summed %.3f" % (
    a[0], a[1], a[2], b[1], b[2], a[1] / b[1], b[2] / a[2], c[1], d[1], c[2], d[2], a[1] / c[1] + a[1] / d[1]))
PY
done
echo "# end $(date -u +%T) load: $(cat /proc/loadavg)"
rm -rf $t
