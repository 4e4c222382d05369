#!/bin/bash
# scripts/bench-clock.sh [REPS] — the /clock part of scripts/bench.sh alone,
# interleaved: per repetition, one run of bench/clocklat (a use_sim_time Go
# node whose ROS timer each sample makes due; the callback's wall time) and
# one of clocksub_cyclone (its receipt), each against clockpub_cyclone
# publishing 'start=1;play 1x 5s' at 100 Hz, paired by sim time with the
# publisher's wall time just before each write. Prints every run's
# p50/p90/p99 (µs), the medians, and the Go/Cyclone ratio of each
# repetition (a same-run comparison) with their median and range. Runs in
# interop/netns (loopback only). CLOCKLAT_B=path adds a second clocklat
# build's runs (tag goB) to every repetition, for a same-run A/B.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
R=${1:-7}
B=${NROS_INTEROP_PEERS:-$root/interop/build}
L=$(mktemp -d /tmp/nros-bench-clock.XXXXXX)
sh "$root/interop/build.sh" >/dev/null
(cd "$root" && go build -o "$L/clocklat" ./bench/clocklat)
one() { # TAG PROG r
  "$root/interop/netns" -s "$2 --count 490 --timeout 10 >$L/$1_$3.sub & $B/clockpub_cyclone --script 'start=1;play 1x 5s' --wait-subs 1 --wait-timeout 20 >$L/$1_$3.pub; wait" 2>/dev/null || true
  awk 'NR == FNR { w[$2 " " $3] = $1; next } ($2 " " $3) in w { print ($1 - w[$2 " " $3]) / 1000 }' "$L/$1_$3.pub" "$L/$1_$3.sub" |
    sort -g | awk -v tag="$1" '{ v[NR] = $1 } END { if (NR == 0) exit; i50 = int((NR * 50 + 99) / 100); i90 = int((NR * 90 + 99) / 100); i99 = int((NR * 99 + 99) / 100); printf "%s %s %s %d %s\n", tag, v[i50], v[i99], NR, v[i90] }'
}
for r in $(seq 1 "$R"); do
  one go "$L/clocklat" "$r"
  if [ -n "${CLOCKLAT_B:-}" ]; then one goB "$CLOCKLAT_B" "$r"; fi
  one cyclone "$B/clocksub_cyclone" "$r"
done | tee "$L/all.txt"
med() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
tags="go cyclone"
[ -z "${CLOCKLAT_B:-}" ] || tags="go goB cyclone"
for t in $tags; do
  p50=$(awk -v t=$t '$1 == t { print $2 }' "$L/all.txt" | med)
  p90=$(awk -v t=$t '$1 == t { print $5 }' "$L/all.txt" | med)
  p99=$(awk -v t=$t '$1 == t { print $3 }' "$L/all.txt" | med)
  echo "median over $R runs: $t p50 $p50 µs, p90 $p90 µs, p99 $p99 µs"
done
# Same-run ratios: repetition r's Go figure over repetition r's Cyclone one.
for t in ${tags/ cyclone/}; do
  for col in 2:p50 5:p90 3:p99; do
    c=${col%%:*} name=${col#*:}
    awk -v c="$c" -v t=$t '$1 == t { g[++ng] = $c } $1 == "cyclone" { y[++ny] = $c } END { for (i = 1; i <= ng && i <= ny; i++) printf "%.3f\n", g[i] / y[i] }' "$L/all.txt" |
      sort -g | awk -v name="$name" -v t=$t '{ v[NR] = $1 } END { if (NR) printf "ratio %s/Cyclone %s: median %.2f (range %.2f-%.2f over %d same-run pairs)\n", t, name, v[int((NR + 1) / 2)], v[1], v[NR], NR }'
  done
done
