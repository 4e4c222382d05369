#!/bin/sh
# scripts/bench-secure.sh [REPS] [LOGDIR] - nros-go with DDS Security
# (SROS2, the governance `nros security` writes: RTPS SIGN, discovery,
# metadata and data ENCRYPT) against secure Cyclone DDS, side by side.
#
#   sh scripts/bench-secure.sh        # 3 runs of every case
#   LAT64=1000 sh scripts/bench-secure.sh 1
#
# Every run is in its own loopback-only namespace (interop/netns), the
# repetitions interleaved as in scripts/bench.sh. Every participant is
# secure (ROS_SECURITY_ENABLE=true, Enforce, one keystore made by
# `nros security`, an enclave per side). Cases:
#  * 64 B round trip, reliable KEEP_LAST 10, one sample in flight: Go↔Go,
#    Cyclone↔Cyclone, Go→Cyclone, Cyclone→Go; ratio against Cyclone↔Cyclone.
#  * /clock → callback: secure clockpub_cyclone at 100 Hz; bench/clocklat
#    (Go, use_sim_time, a 10 ms ROS timer: callback time) against
#    clocksub_cyclone (receipt time), paired by sim time.
#  * start to first sample: both processes started together, the time until
#    a secure chattersub_cyclone prints its first sample (discovery, PKI-DH
#    handshake, key exchange, matching); publisher Go (`nros topic pub`,
#    100 Hz) or Cyclone (chatterpub, 100 Hz); and the same unsecured.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
R=${1:-3}
L=${2:-/tmp/nros-bench-secure}
B=${NROS_INTEROP_PEERS:-$root/interop/build}
NS=$root/interop/netns
LAT64=${LAT64:-5000}
CLOCKN=490

say() { echo "bench-secure.sh: $*" >&2; }

if [ ! -x "$B/pingpong_cyclone" ] || [ ! -x "$B/clockpub_cyclone" ]; then
  say "building the interop peers into $B"
  sh "$root/interop/build.sh" "$B" >&2
fi
mkdir -p "$L/bin"
rm -rf "$L"/*.log "$L"/*.sub "$L"/*.pub "$L/ks"
(cd "$root" && go build -o "$L/bin/nros" ./cmd/nros && go build -o "$L/bin/clocklat" ./bench/clocklat)
"$L/bin/nros" security create_keystore "$L/ks" >/dev/null
for e in /ping /pong /clock /sub /talker /listener; do
  "$L/bin/nros" security create_enclave "$L/ks" "$e" >/dev/null
done

# sec ENCLAVE: the environment that makes a process secure in ENCLAVE
sec() {
  echo "ROS_SECURITY_ENABLE=true ROS_SECURITY_STRATEGY=Enforce ROS_SECURITY_KEYSTORE=$L/ks ROS_SECURITY_ENCLAVE_OVERRIDE=$1"
}

prog() {
  case $1 in
    go) echo "$L/bin/nros bench pingpong" ;;
    *) echo "$B/pingpong_$1" ;;
  esac
}

run() {
  timeout 90 "$NS" -s "$2" >"$L/$1.log" 2>&1 || say "$1 exited $? (see $L/$1.log)"
}

pairs="go:go cyclone:cyclone go:cyclone cyclone:go"
t0=$(date +%s)
for r in $(seq 1 "$R"); do
  say "run $r of $R"
  for p in $pairs; do
    a=${p%:*}
    b=${p#*:}
    run "lat_${a}_${b}_$r" "env $(sec /pong) $(prog "$b") pong & env $(sec /ping) $(prog "$a") ping --size 64 --count $LAT64 --warmup 200; wait"
  done
  script='start=1;play 1x 5s'
  run "clock_go_$r" "env $(sec /sub) $L/bin/clocklat --count $CLOCKN --timeout 20 >$L/clock_go_${r}.sub & env $(sec /clock) $B/clockpub_cyclone --script '$script' --wait-subs 1 --wait-timeout 30 --settle 1 >$L/clock_go_${r}.pub; wait"
  run "clock_cyclone_$r" "env $(sec /sub) $B/clocksub_cyclone --count $CLOCKN --timeout 20 >$L/clock_cyclone_${r}.sub & env $(sec /clock) $B/clockpub_cyclone --script '$script' --wait-subs 1 --wait-timeout 30 --settle 1 >$L/clock_cyclone_${r}.pub; wait"
  for mode in secure plain; do
    se="" pe=""
    if [ $mode = secure ]; then se="env $(sec /listener)" pe="env $(sec /talker)"; fi
    run "first_go_${mode}_$r" "t0=\$(date +%s%N); $se $B/chattersub_cyclone --count 1 --first 0 --allow-gaps --timeout 30 >$L/first_go_${mode}_${r}.sub & $pe $L/bin/nros topic pub /chatter std_msgs/msg/String '{data: \"Hello World: 1\"}' --rate 100 --quiet & p=\$!; echo \$t0 >$L/first_go_${mode}_${r}.t0; wait %1; kill \$p; wait"
    run "first_cyclone_${mode}_$r" "t0=\$(date +%s%N); $se $B/chattersub_cyclone --count 1 --first 0 --allow-gaps --timeout 30 >$L/first_cyclone_${mode}_${r}.sub & $pe $B/chatterpub_cyclone --count 3000 --hz 100 --timeout 40 & p=\$!; echo \$t0 >$L/first_cyclone_${mode}_${r}.t0; wait %1; kill \$p; wait"
  done
done
say "measured in $(($(date +%s) - t0)) s; logs in $L"

# ---- summary ------------------------------------------------------------

# shellcheck source=scripts/benchlib.sh
. "$root/scripts/benchlib.sh"

name() { [ "$1" = go ] && echo Go || echo Cyclone; }

echo
echo "## Secure round trip, 64 B, reliable KEEP_LAST 10, µs (median of $R runs [min..max]); ratio = / secure Cyclone↔Cyclone"
echo
echo "| ping → pong | p50 | p99 | lost | p50 ratio | p99 ratio |"
echo "|---|---|---|---|---|---|"
ref50=$(first "$(field p50 "$L"/lat_cyclone_cyclone_*.log | med)")
ref99=$(first "$(field p99 "$L"/lat_cyclone_cyclone_*.log | med)")
for p in $pairs; do
  a=${p%:*}
  b=${p#*:}
  f=$(ls "$L"/lat_${a}_${b}_*.log)
  p50=$(field p50 $f | med)
  p99=$(field p99 $f | med)
  lost=$(field lost $f | awk '{ s += $1 } END { print s + 0 }')
  echo "| $(name "$a") → $(name "$b") | $p50 | $p99 | $lost | $(ratio "$(first "$p50")" "$ref50") | $(ratio "$(first "$p99")" "$ref99") |"
done

echo
echo "## Secure /clock → callback (Go: ROS timer callback; Cyclone: receipt), µs (median of $R runs [min..max])"
echo
echo "| subscriber | p50 | p99 | samples | p50 ratio |"
echo "|---|---|---|---|---|"
for v in cyclone go; do
  : >"$L/clock_$v.sum"
  for r in $(seq 1 "$R"); do
    clockpair "$L/clock_${v}_$r.pub" "$L/clock_${v}_$r.sub" >>"$L/clock_$v.sum" || true
  done
done
c50=$(first "$(cut -d' ' -f1 "$L/clock_cyclone.sum" | med)")
for v in cyclone go; do
  p50=$(cut -d' ' -f1 "$L/clock_$v.sum" | med)
  p99=$(cut -d' ' -f2 "$L/clock_$v.sum" | med)
  n=$(cut -d' ' -f3 "$L/clock_$v.sum" | med)
  echo "| $(name $v) | $p50 | $p99 | $n | $(ratio "$(first "$p50")" "$c50") |"
done

echo
echo "## Start to first sample at a secure/plain chattersub_cyclone, ms (median of $R runs [min..max])"
echo
echo "| publisher | secure | plain |"
echo "|---|---|---|"
for v in go cyclone; do
  row="| $(name $v)"
  for mode in secure plain; do
    ms=$(for r in $(seq 1 "$R"); do
      t0=$(cat "$L/first_${v}_${mode}_$r.t0" 2>/dev/null || true)
      t1=$(head -1 "$L/first_${v}_${mode}_$r.sub" 2>/dev/null | cut -d' ' -f1)
      [ -n "$t0" ] && [ -n "$t1" ] && awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }'
    done | med)
    row="$row | $ms"
  done
  echo "$row |"
done
echo
echo "load: $(uptime)"
