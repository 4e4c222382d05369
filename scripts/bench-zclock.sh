#!/bin/bash
# scripts/bench-zclock.sh [REPS] — the Zenoh /clock rows of scripts/bench.sh
# alone, interleaved: per repetition, one run of bench/clocklat on Zenoh
# (RMW_IMPLEMENTATION=rmw_zenoh_cpp, listening; a use_sim_time Go node whose
# ROS timer each sample makes due: the callback's wall time), one of
# clocklat --rx (its bare receipt: a raw subscription, on the transport's
# goroutine) and one of zenoh-pico's zclocksub (its receipt), each against
# zclockpub (pico, peer mode, connecting) publishing 'start=1;play 1x 5s' at
# 100 Hz, paired by sim time with the publisher's wall time just before
# each write; samples from sim time 2 s on (between two picos the first
# ~20 arrive in one burst). Prints every run's p50/p90/p99 (µs), the
# medians, and the Go/pico ratios of each repetition (same-run comparisons)
# with their median and range. Runs in interop/netns (loopback only).
#
# CLOCKLAT=path runs that clocklat binary instead of building one;
# CLOCKLAT_B=path adds a second one's callback runs (tag goB) to every
# repetition, for a same-run A/B of two builds.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
R=${1:-7}
B=${NROS_INTEROP_PEERS:-$root/interop/build}
L=$(mktemp -d /tmp/nros-bench-zclock.XXXXXX)
sh "$root/interop/build.sh" >/dev/null
CL=${CLOCKLAT:-}
if [ -z "$CL" ]; then
  (cd "$root" && go build -o "$L/clocklat" ./bench/clocklat)
  CL=$L/clocklat
fi
ZEP=tcp/127.0.0.1:7450
zgo="RMW_IMPLEMENTATION=rmw_zenoh_cpp ZENOH_ROUTER_CHECK_ATTEMPTS=-1 ZENOH_CONFIG_OVERRIDE='listen/endpoints=[\"$ZEP\"];connect/endpoints=[]'"
pub="$B/zclockpub --mode peer --connect $ZEP --script 'start=1;play 1x 5s' --wait-subs 1 --wait-timeout 20"
# one TAG SUBSCRIBER-COMMAND r (the subscriber writes "wall sec nsec" to $L/TAG_r.sub);
# a listening pico is given 0.5 s before anything connects.
. "$root/scripts/benchlib.sh"
one() {
  timeout 60 "$root/interop/netns" -s "$2 & sleep 0.5; $pub >$L/$1_$3.pub; wait" >/dev/null 2>&1 || true
  clockpair "$L/$1_$3.pub" "$L/$1_$3.sub" 2 | sed "s/^/$1 /"
}
for r in $(seq 1 "$R"); do
  one go "env $zgo $CL --count 490 --timeout 15 >$L/go_$r.sub" "$r"
  one gorx "env $zgo $CL --count 490 --timeout 15 --rx $L/gorx_$r.sub >/dev/null" "$r"
  if [ -n "${CLOCKLAT_B:-}" ]; then one goB "env $zgo $CLOCKLAT_B --count 490 --timeout 15 >$L/goB_$r.sub" "$r"; fi
  one zpico "$B/zclocksub --mode peer --listen $ZEP --count 490 --timeout 15 >$L/zpico_$r.sub" "$r"
done | tee "$L/all.txt"
# Medians, and same-run ratios: repetition r's Go figure over repetition r's pico one.
if [ -n "${CLOCKLAT_B:-}" ]; then
  samerun_report "$L/all.txt" "$R" zpico pico go gorx goB
else
  samerun_report "$L/all.txt" "$R" zpico pico go gorx
fi
echo "logs: $L"
