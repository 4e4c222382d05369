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
. "$root/scripts/benchlib.sh"
one() { # TAG PROG r
  "$root/interop/netns" -s "$2 --count 490 --timeout 10 >$L/$1_$3.sub & $B/clockpub_cyclone --script 'start=1;play 1x 5s' --wait-subs 1 --wait-timeout 20 >$L/$1_$3.pub; wait" 2>/dev/null || true
  clockpair "$L/$1_$3.pub" "$L/$1_$3.sub" | sed "s/^/$1 /"
}
for r in $(seq 1 "$R"); do
  one go "$L/clocklat" "$r"
  if [ -n "${CLOCKLAT_B:-}" ]; then one goB "$CLOCKLAT_B" "$r"; fi
  one cyclone "$B/clocksub_cyclone" "$r"
done | tee "$L/all.txt"
# Medians, and same-run ratios: repetition r's Go figure over repetition r's Cyclone one.
if [ -n "${CLOCKLAT_B:-}" ]; then
  samerun_report "$L/all.txt" "$R" cyclone Cyclone go goB
else
  samerun_report "$L/all.txt" "$R" cyclone Cyclone go
fi
