#!/bin/sh
# scripts/bench.sh [REPS] [LOGDIR] - nros-go against Cyclone DDS (and Fast
# DDS) on this machine, side by side, in one command.
#
#   sh scripts/bench.sh            # 3 runs of every case, about 6 minutes (3 of them the Zenoh rows)
#   sh scripts/bench.sh 1          # one run of every case (a quick look)
#
# Every run happens in its own loopback-only network namespace
# (interop/netns), one case after the other, the repetitions interleaved
# (case A run 1, case B run 1, ..., case A run 2, ...) so that a slow
# moment of the machine does not land on one case only. Raw output goes to
# LOGDIR (default /tmp/nros-bench-go), one log per run; the summary tables
# (medians over the runs, with [min..max]) go to stdout.
#
# Cases, ROS default QoS (reliable, KEEP_LAST 10, volatile) unless noted:
#  * round-trip latency, one sample in flight: `pingpong ping` / `pong`,
#    64 B (LAT64 = 10000 round trips) and 64 KiB (LAT64K = 2000; as the
#    reference peers' anchors in shared/peers), for the pairs
#    go/go, cyclone/cyclone, go/cyclone, cyclone/go, go/fastdds, fastdds/go,
#    cyclone/fastdds, fastdds/cyclone (ping side first). Go is
#    `nros bench pingpong`; go/echo is Go ping against bench/echopong, a
#    pong that republishes from the transport's deliver function (no
#    hand-off to another goroutine, as the CLI pong does); direct/echo
#    also drives ping from deliver (bench/directping): the round trip of
#    the rtps transport itself. Each row's ratio is against the same pair
#    with Cyclone in Go's place.
#  * best-effort throughput of 64 B messages, TPSEC (5) seconds of flooding;
#    messages/s received by pong.
#  * /clock -> callback: clockpub_cyclone publishes a 100 Hz script and
#    prints wall_ns before each write; bench/clocklat (a Go node with
#    use_sim_time and a 10 ms ROS timer, so every sample crosses one
#    deadline) prints the wall time at each callback; clocksub_cyclone
#    prints the wall time at receipt. Pairs are matched by sim time. A
#    third run per repetition has clocklat also record the bare receipt
#    in Go (a raw subscription on the transport's goroutine).
#
#  * Zenoh (ZENOH=1, the default): the same three measures on rmw_zenoh's
#    wire, peer to peer over loopback TCP (one side listening on
#    tcp/127.0.0.1:7450, the other connecting; no router), Go against
#    zenoh-pico 1.7.2 (the library nano-ros runs on) in Go's place:
#    64 B round trip `nros bench pingpong` (RMW_IMPLEMENTATION=
#    rmw_zenoh_cpp) Go<->Go vs interop/build/zpingpong pico<->pico;
#    best-effort 64 B throughput for ZTPSEC (1) seconds (zenoh-pico's
#    session does not survive a longer flood at full speed here); /clock
#    from zclockpub (pico, 100 Hz) to clocklat's ROS-timer callback on
#    Zenoh, to its bare receipt, and to zclocksub's receipt (pico). Ratios
#    are Go over pico of the same runs.
#
# Environment: NROS_INTEROP_PEERS=DIR uses prebuilt peers (default
# interop/build, built by interop/build.sh when missing); LAT64, LAT64K,
# TPSEC, ZTPSEC, FASTDDS=0 (skip the Fast DDS pairs), ZENOH=0 (skip the
# Zenoh cases), ONLY=zenoh (only them) change the cases; SUMMARY_ONLY=1
# prints the tables again from the logs in LOGDIR without measuring.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
R=${1:-3}
L=${2:-/tmp/nros-bench-go}
B=${NROS_INTEROP_PEERS:-$root/interop/build}
NS=$root/interop/netns
LAT64=${LAT64:-10000}
LAT64K=${LAT64K:-2000}
TPSEC=${TPSEC:-5}
FASTDDS=${FASTDDS:-1}
ZENOH=${ZENOH:-1}
ZTPSEC=${ZTPSEC:-1}
ONLY=${ONLY:-}
CLOCKN=490 # callbacks/receipts to pair; the script publishes 500 samples

say() { echo "bench.sh: $*" >&2; }

SUMMARY_ONLY=${SUMMARY_ONLY:-}
if [ -n "$SUMMARY_ONLY" ]; then
  : # SUMMARY_ONLY=1: print the tables of the logs already in LOGDIR
elif [ ! -x "$B/pingpong_cyclone" ] || [ ! -x "$B/clockpub_cyclone" ] || [ ! -x "$B/zpingpong" ]; then
  say "building the interop peers into $B"
  sh "$root/interop/build.sh" "$B" >&2
fi
mkdir -p "$L/bin"
[ -n "$SUMMARY_ONLY" ] || rm -f "$L"/*.log "$L"/*.sub "$L"/*.pub "$L"/*.sum
[ -n "$SUMMARY_ONLY" ] || (cd "$root" && go build -o "$L/bin/nros" ./cmd/nros && go build -o "$L/bin/clocklat" ./bench/clocklat &&
  go build -o "$L/bin/echopong" ./bench/echopong && go build -o "$L/bin/directping" ./bench/directping)
# zgo-listen / zgo-connect CMD...: a Go program on Zenoh (rmw_zenoh's
# variables), listening on or connecting to the one loopback endpoint
ZEP=tcp/127.0.0.1:7450
for side in listen connect; do
  if [ $side = listen ]; then l="[\"$ZEP\"]" c="[]"; else l="[]" c="[\"$ZEP\"]"; fi
  printf '#!/bin/sh\nRMW_IMPLEMENTATION=rmw_zenoh_cpp ZENOH_ROUTER_CHECK_ATTEMPTS=-1 ZENOH_CONFIG_OVERRIDE='"'"'listen/endpoints=%s;connect/endpoints=%s'"'"' exec "$@"\n' "$l" "$c" >"$L/bin/zgo-$side"
  chmod +x "$L/bin/zgo-$side"
done

# prog SIDE: the pingpong command of one side (go, cyclone, fastdds)
prog() {
  case $1 in
    go) echo "$L/bin/nros bench pingpong" ;;
    echo) echo "$L/bin/echopong" ;;
    direct) echo "$L/bin/directping" ;;
    *) echo "$B/pingpong_$1" ;;
  esac
}

# run NAME SCRIPT: one run in a fresh namespace, at most 60 s
run() {
  timeout 60 "$NS" -s "$2" >"$L/$1.log" 2>&1 || say "$1 exited $? (see $L/$1.log)"
}

pairs="go:go go:echo direct:echo cyclone:cyclone go:cyclone cyclone:go"
[ "$FASTDDS" = 0 ] || pairs="$pairs go:fastdds cyclone:fastdds fastdds:go fastdds:cyclone"

# zenoh_cases r: the Zenoh cases of repetition r. A listening zenoh-pico is
# given 0.5 s before anything connects (zenoh-pico 1.7.2 can crash when a
# connection lands while z_open starts its accept task).
zenoh_cases() {
  r=$1
  zl="$L/bin/zgo-listen" zc="$L/bin/zgo-connect"
  run "zlat_go_go_64_$r" "$zl $L/bin/nros bench pingpong pong & sleep 0.5; $zc $L/bin/nros bench pingpong ping --size 64 --count $LAT64 --warmup 200; wait"
  run "zlat_zpico_zpico_64_$r" "$B/zpingpong pong --mode peer --listen $ZEP & sleep 0.5; $B/zpingpong ping --mode peer --connect $ZEP --size 64 --count $LAT64 --warmup 200; wait"
  run "ztp_go_go_64_be_$r" "$zl $L/bin/nros bench pingpong pong --best-effort & sleep 0.5; $zc $L/bin/nros bench pingpong ping --best-effort --mode throughput --duration $ZTPSEC --size 64; wait"
  run "ztp_zpico_zpico_64_be_$r" "$B/zpingpong pong --mode peer --listen $ZEP --best-effort & sleep 0.5; $B/zpingpong ping --mode peer --connect $ZEP --best-effort --mode throughput --duration $ZTPSEC --size 64; wait"
  zpub="$B/zclockpub --mode peer --connect $ZEP --script '$script' --wait-subs 1 --wait-timeout 20"
  run "zclock_go_$r" "$zl $L/bin/clocklat --count $CLOCKN --timeout 15 >$L/zclock_go_${r}.sub & sleep 0.5; $zpub >$L/zclock_go_${r}.pub; wait"
  run "zclock_gorx_$r" "$zl $L/bin/clocklat --count $CLOCKN --timeout 15 --rx $L/zclock_gorx_${r}.sub >/dev/null & sleep 0.5; $zpub >$L/zclock_gorx_${r}.pub; wait"
  run "zclock_zpico_$r" "$B/zclocksub --mode peer --listen $ZEP --count $CLOCKN --timeout 15 >$L/zclock_zpico_${r}.sub & sleep 0.5; $zpub >$L/zclock_zpico_${r}.pub; wait"
}

t0=$(date +%s)
script='start=1;play 1x 5s'
[ -z "$SUMMARY_ONLY" ] || R=$(ls "$L"/zlat_go_go_64_*.log "$L"/lat_go_go_64_*.log 2>/dev/null | sed 's/.*_//; s/\.log$//' | sort -n | tail -1)
for r in $(seq 1 "$R"); do
  [ -z "$SUMMARY_ONLY" ] || break
  say "run $r of $R"
  if [ "$ZENOH" != 0 ]; then zenoh_cases "$r"; fi
  [ "$ONLY" != zenoh ] || continue
  for p in $pairs; do
    a=${p%:*}
    b=${p#*:}
    run "lat_${a}_${b}_64_$r" "$(prog "$b") pong & $(prog "$a") ping --size 64 --count $LAT64 --warmup 200; wait"
    run "lat_${a}_${b}_65536_$r" "$(prog "$b") pong & $(prog "$a") ping --size 65536 --count $LAT64K --warmup 100; wait"
  done
  for v in go cyclone; do
    run "tp_${v}_${v}_64_be_$r" "$(prog $v) pong --best-effort & $(prog $v) ping --best-effort --mode throughput --duration $TPSEC --size 64; wait"
  done
  run "clock_go_$r" "$L/bin/clocklat --count $CLOCKN --timeout 10 >$L/clock_go_${r}.sub & $B/clockpub_cyclone --script '$script' --wait-subs 1 --wait-timeout 20 >$L/clock_go_${r}.pub; wait"
  run "clock_gorx_$r" "$L/bin/clocklat --count $CLOCKN --timeout 10 --rx $L/clock_gorx_${r}.sub >/dev/null & $B/clockpub_cyclone --script '$script' --wait-subs 1 --wait-timeout 20 >$L/clock_gorx_${r}.pub; wait"
  run "clock_cyclone_$r" "$B/clocksub_cyclone --count $CLOCKN --timeout 10 >$L/clock_cyclone_${r}.sub & $B/clockpub_cyclone --script '$script' --wait-subs 1 --wait-timeout 20 >$L/clock_cyclone_${r}.pub; wait"
done
[ -n "$SUMMARY_ONLY" ] || say "measured in $(($(date +%s) - t0)) s; logs in $L"

# ---- summary -------------------------------------------------------------

# shellcheck source=scripts/benchlib.sh
. "$root/scripts/benchlib.sh"

name() {
  case $1 in
    go) echo "Go" ;;
    echo) echo "Go echopong" ;;
    direct) echo "Go directping" ;;
    cyclone) echo "Cyclone" ;;
    fastdds) echo "Fast DDS" ;;
  esac
}

if [ "$ZENOH" != 0 ]; then
  echo
  echo "## Zenoh (rmw_zenoh's wire, peer to peer over loopback TCP, no router), median of $R runs [min..max]; ratio = Go / zenoh-pico"
  echo
  echo "(/clock: samples from sim time 2 s on, the first second is warm-up: between two picos the first ~20 samples arrive in one burst ~0.2 s late)"
  echo
  echo "| case | p50 µs | p99 µs | lost | p50 ratio | p99 ratio |"
  echo "|---|---|---|---|---|---|"
  g50=$(field p50 "$L"/zlat_go_go_64_*.log | med)
  g99=$(field p99 "$L"/zlat_go_go_64_*.log | med)
  z50=$(field p50 "$L"/zlat_zpico_zpico_64_*.log | med)
  z99=$(field p99 "$L"/zlat_zpico_zpico_64_*.log | med)
  gl=$(field lost "$L"/zlat_go_go_64_*.log | awk '{ s += $1 } END { print s + 0 }')
  zlost=$(field lost "$L"/zlat_zpico_zpico_64_*.log | awk '{ s += $1 } END { print s + 0 }')
  echo "| round trip 64 B, Go → Go (nros bench pingpong) | $g50 | $g99 | $gl | $(ratio "$(first "$g50")" "$(first "$z50")") | $(ratio "$(first "$g99")" "$(first "$z99")") |"
  echo "| round trip 64 B, zenoh-pico → zenoh-pico (zpingpong) | $z50 | $z99 | $zlost | ref | ref |"
  for v in go zpico; do
    : >"$L/zclock_$v.sum"
    [ $v = go ] && : >"$L/zclock_gorx.sum"
    for r in $(seq 1 "$R"); do
      clockpair "$L/zclock_${v}_$r.pub" "$L/zclock_${v}_$r.sub" 2 >>"$L/zclock_$v.sum" || true
      [ $v = go ] && { clockpair "$L/zclock_gorx_$r.pub" "$L/zclock_gorx_$r.sub" 2 >>"$L/zclock_gorx.sum" || true; }
    done
  done
  c50=$(cut -d' ' -f1 "$L/zclock_zpico.sum" | med)
  c99=$(cut -d' ' -f2 "$L/zclock_zpico.sum" | med)
  for v in go gorx zpico; do
    p50=$(cut -d' ' -f1 "$L/zclock_$v.sum" | med)
    p99=$(cut -d' ' -f2 "$L/zclock_$v.sum" | med)
    case $v in
      go) label="/clock zclockpub → Go ROS-timer callback (clocklat)" ;;
      gorx) label="/clock zclockpub → Go bare receipt (raw subscription, separate runs)" ;;
      *) label="/clock zclockpub → zclocksub receipt (pico)" ;;
    esac
    if [ $v = zpico ]; then echo "| $label | $p50 | $p99 | - | ref | ref |"; else
      echo "| $label | $p50 | $p99 | - | $(ratio "$(first "$p50")" "$(first "$c50")") | $(ratio "$(first "$p99")" "$(first "$c99")") |"; fi
  done
  echo
  echo "| best-effort throughput 64 B, ${ZTPSEC} s flood | received msgs/s | sent msgs/s | ratio (received) |"
  echo "|---|---|---|---|"
  zref=$(first "$(field recv_msgs_per_s "$L"/ztp_zpico_zpico_64_be_*.log | med)")
  for v in go zpico; do
    rx=$(field recv_msgs_per_s "$L"/ztp_${v}_${v}_64_be_*.log | med)
    tx=$(field sent_msgs_per_s "$L"/ztp_${v}_${v}_64_be_*.log | med)
    lbl=$([ $v = go ] && echo "Go → Go" || echo "zenoh-pico → zenoh-pico")
    echo "| $lbl | $rx | $tx | $(ratio "$(first "$rx")" "$zref") |"
  done
fi
[ "$ONLY" != zenoh ] || exit 0

echo
echo "## Round-trip latency, reliable KEEP_LAST 10, µs (median of $R runs [min..max]); ratio = / the same pair with Cyclone in Go's place"
echo
echo "| ping → pong | size | p50 | p99 | lost | p50 ratio | p99 ratio |"
echo "|---|---|---|---|---|---|---|"
for s in 64 65536; do
  for p in $pairs; do
    a=${p%:*}
    b=${p#*:}
    ra=$a rb=$b
    [ "$ra" = go ] || [ "$ra" = direct ] && ra=cyclone
    [ "$rb" = go ] || [ "$rb" = echo ] && rb=cyclone
    f=$(ls "$L"/lat_${a}_${b}_${s}_*.log)
    p50=$(field p50 $f | med)
    p99=$(field p99 $f | med)
    lost=$(field lost $f | awk '{ s += $1 } END { print s + 0 }')
    sz=$([ "$s" = 64 ] && echo "64 B" || echo "64 KiB")
    if [ "$ra:$rb" = "$a:$b" ]; then
      r50=ref r99=ref
    else
      r50=$(ratio "$(first "$p50")" "$(first "$(field p50 "$L"/lat_${ra}_${rb}_${s}_*.log | med)")")
      r99=$(ratio "$(first "$p99")" "$(first "$(field p99 "$L"/lat_${ra}_${rb}_${s}_*.log | med)")")
    fi
    echo "| $(name "$a") → $(name "$b") | $sz | $p50 | $p99 | $lost | $r50 | $r99 |"
  done
done

echo
echo "## Best-effort throughput, 64 B, ${TPSEC} s flood (median of $R runs [min..max]); ratio = / Cyclone→Cyclone"
echo
echo "| sender → receiver | received msgs/s | sent msgs/s | ratio (received) |"
echo "|---|---|---|---|"
ref=$(first "$(field recv_msgs_per_s "$L"/tp_cyclone_cyclone_64_be_*.log | med)")
for v in go cyclone; do
  rx=$(field recv_msgs_per_s "$L"/tp_${v}_${v}_64_be_*.log | med)
  tx=$(field sent_msgs_per_s "$L"/tp_${v}_${v}_64_be_*.log | med)
  echo "| $(name $v) → $(name $v) | $rx | $tx | $(ratio "$(first "$rx")" "$ref") |"
done

echo
echo "## /clock write → receipt, µs: clockpub_cyclone 100 Hz; Go = ROS-timer callback in a use_sim_time node, Cyclone = clocksub_cyclone's receipt (median of $R runs [min..max] of the per-run percentiles)"
echo
echo "| receiver | p50 | p99 | samples paired per run | p50 ratio | p99 ratio |"
echo "|---|---|---|---|---|---|"
for v in cyclone go gorx; do
  : >"$L/clock_$v.sum"
  for r in $(seq 1 "$R"); do
    clockpair "$L/clock_${v}_$r.pub" "$L/clock_${v}_$r.sub" >>"$L/clock_$v.sum" || true
  done
done
c50=$(cut -d' ' -f1 "$L/clock_cyclone.sum" | med)
c99=$(cut -d' ' -f2 "$L/clock_cyclone.sum" | med)
for v in go gorx cyclone; do
  p50=$(cut -d' ' -f1 "$L/clock_$v.sum" | med)
  p99=$(cut -d' ' -f2 "$L/clock_$v.sum" | med)
  n=$(cut -d' ' -f3 "$L/clock_$v.sum" | tr '\n' ' ')
  case $v in
    go) label="Go ROS-timer callback" ;;
    gorx) label="Go bare receipt (raw subscription, separate runs)" ;;
    *) label="Cyclone clocksub receipt" ;;
  esac
  echo "| $label | $p50 | $p99 | ${n% } | $(ratio "$(first "$p50")" "$(first "$c50")") | $(ratio "$(first "$p99")" "$(first "$c99")") |"
done
