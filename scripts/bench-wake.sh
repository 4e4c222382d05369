#!/bin/bash
# scripts/bench-wake.sh [REPS] — where the time of the /clock path goes:
# the wake, the read and the work after it, against the reference peer's
# receipt, on both transports, interleaved. Per repetition:
#   - DDS: bench/clocklat built with -tags nrosstamp (--stamps) and then
#     clocksub_cyclone, each against clockpub_cyclone;
#   - Zenoh: the same clocklat (RMW_IMPLEMENTATION=rmw_zenoh_cpp,
#     listening) and then zenoh-pico's zclocksub, each against zclockpub
#     (peer mode, connecting);
# the publishers play 'start=1;play 1x 5s' at 100 Hz and write their wall
# time just before each write; samples pair by sim time (from 2 s on).
# For the Go node it pairs three instants of each sample: "woke" (the
# runtime's poller has woken the goroutine that leads the /clock socket;
# it has not read yet), "read" (the read returned the sample's bytes) and
# "go" (the ROS-timer callback's first line), and per sample the "work"
# from the read to the callback. Prints each run's p50 / p99 / count /
# p90 (µs), the medians, and the same-run ratios of each to the peer's
# receipt with their median and range: the ratio of "woke" is the floor
# that no work after the wake can go under. Runs in interop/netns
# (loopback only).
#
# CLOCKLAT_B=path (a clocklat built with -tags nrosstamp) adds its Zenoh
# runs to every repetition (tag zenohB), for a same-run A/B of the work.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
R=${1:-5}
B=${NROS_INTEROP_PEERS:-$root/interop/build}
L=$(mktemp -d /tmp/nros-bench-wake.XXXXXX)
sh "$root/interop/build.sh" >/dev/null
(cd "$root" && go build -tags nrosstamp -o "$L/clocklat" ./bench/clocklat)
. "$root/scripts/benchlib.sh"
ZEP=tcp/127.0.0.1:7450
zgo="RMW_IMPLEMENTATION=rmw_zenoh_cpp ZENOH_ROUTER_CHECK_ATTEMPTS=-1 ZENOH_CONFIG_OVERRIDE='listen/endpoints=[\"$ZEP\"];connect/endpoints=[]'"
zpub="$B/zclockpub --mode peer --connect $ZEP --script 'start=1;play 1x 5s' --wait-subs 1 --wait-timeout 20"
dpub="$B/clockpub_cyclone --script 'start=1;play 1x 5s' --wait-subs 1 --wait-timeout 20"
# run TAG SUBSCRIBER-COMMAND PUBLISHER-COMMAND: the subscriber writes
# "wall sec nsec" to $L/TAG.sub; a listening one is given 0.5 s first.
run() {
  timeout 60 "$root/interop/netns" -s "$2 >$L/$1.sub & sleep 0.5; $3 >$L/$1.pub; wait" >/dev/null 2>&1 || true
}
# work READ SUB: the p50 / p99 / count / p90 (µs) of each sample's
# callback minus its read (paired by sim time, from 2 s on)
work() {
  awk 'NR == FNR { r[$2 " " $3] = $1; next } $2 >= 2 && ($2 " " $3) in r { print ($1 - r[$2 " " $3]) / 1000 }' "$1" "$2" | pctl
}
# stamped TAG CLOCKLAT r ENV PUBLISHER: a stamped clocklat run, its
# instants and its work
stamped() {
  run "$1_$3" "$4 $2 --count 490 --timeout 15 --stamps $L/$1_$3" "$5"
  for k in go:sub read:read woke:woke; do
    clockpair "$L/$1_$3.pub" "$L/$1_$3.${k#*:}" 2 | sed "s/^/$1-${k%%:*} /"
  done
  work "$L/$1_$3.read" "$L/$1_$3.sub" | sed "s/^/$1-work /"
}
for r in $(seq 1 "$R"); do
  stamped dds "$L/clocklat" "$r" "" "$dpub"
  run "cyclone_$r" "$B/clocksub_cyclone --count 490 --timeout 15" "$dpub"
  clockpair "$L/cyclone_$r.pub" "$L/cyclone_$r.sub" 2 | sed "s/^/cyclone /"
  stamped zenoh "$L/clocklat" "$r" "env $zgo" "$zpub"
  if [ -n "${CLOCKLAT_B:-}" ]; then stamped zenohB "$CLOCKLAT_B" "$r" "env $zgo" "$zpub"; fi
  run "zpico_$r" "$B/zclocksub --mode peer --listen $ZEP --count 490 --timeout 15" "$zpub"
  clockpair "$L/zpico_$r.pub" "$L/zpico_$r.sub" 2 | sed "s/^/zpico /"
done | tee "$L/all.txt"
echo "DDS, against Cyclone DDS's receipt:"
samerun_report "$L/all.txt" "$R" cyclone Cyclone dds-go dds-read dds-woke dds-work
echo "Zenoh, against zenoh-pico's receipt:"
if [ -n "${CLOCKLAT_B:-}" ]; then
  samerun_report "$L/all.txt" "$R" zpico pico zenoh-go zenoh-read zenoh-woke zenoh-work zenohB-go zenohB-work
else
  samerun_report "$L/all.txt" "$R" zpico pico zenoh-go zenoh-read zenoh-woke zenoh-work
fi
echo "logs: $L"
