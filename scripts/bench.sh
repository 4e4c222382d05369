#!/bin/sh
# scripts/bench.sh [REPS] [LOGDIR] - nros-go against Cyclone DDS (and Fast
# DDS) on this machine, side by side, in one command.
#
#   sh scripts/bench.sh            # 3 runs of every case, about 3 minutes
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
# Environment: NROS_INTEROP_PEERS=DIR uses prebuilt peers (default
# interop/build, built by interop/build.sh when missing); LAT64, LAT64K,
# TPSEC, FASTDDS=0 (skip the Fast DDS pairs) change the cases.
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
CLOCKN=490 # callbacks/receipts to pair; the script publishes 500 samples

say() { echo "bench.sh: $*" >&2; }

if [ ! -x "$B/pingpong_cyclone" ] || [ ! -x "$B/clockpub_cyclone" ]; then
  say "building the interop peers into $B"
  sh "$root/interop/build.sh" "$B" >&2
fi
mkdir -p "$L/bin"
rm -f "$L"/*.log "$L"/*.sub "$L"/*.pub "$L"/*.sum
(cd "$root" && go build -o "$L/bin/nros" ./cmd/nros && go build -o "$L/bin/clocklat" ./bench/clocklat &&
  go build -o "$L/bin/echopong" ./bench/echopong && go build -o "$L/bin/directping" ./bench/directping)

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

t0=$(date +%s)
for r in $(seq 1 "$R"); do
  say "run $r of $R"
  for p in $pairs; do
    a=${p%:*}
    b=${p#*:}
    run "lat_${a}_${b}_64_$r" "$(prog "$b") pong & $(prog "$a") ping --size 64 --count $LAT64 --warmup 200; wait"
    run "lat_${a}_${b}_65536_$r" "$(prog "$b") pong & $(prog "$a") ping --size 65536 --count $LAT64K --warmup 100; wait"
  done
  for v in go cyclone; do
    run "tp_${v}_${v}_64_be_$r" "$(prog $v) pong --best-effort & $(prog $v) ping --best-effort --mode throughput --duration $TPSEC --size 64; wait"
  done
  script='start=1;play 1x 5s'
  run "clock_go_$r" "$L/bin/clocklat --count $CLOCKN --timeout 10 >$L/clock_go_${r}.sub & $B/clockpub_cyclone --script '$script' --wait-subs 1 --wait-timeout 20 >$L/clock_go_${r}.pub; wait"
  run "clock_gorx_$r" "$L/bin/clocklat --count $CLOCKN --timeout 10 --rx $L/clock_gorx_${r}.sub >/dev/null & $B/clockpub_cyclone --script '$script' --wait-subs 1 --wait-timeout 20 >$L/clock_gorx_${r}.pub; wait"
  run "clock_cyclone_$r" "$B/clocksub_cyclone --count $CLOCKN --timeout 10 >$L/clock_cyclone_${r}.sub & $B/clockpub_cyclone --script '$script' --wait-subs 1 --wait-timeout 20 >$L/clock_cyclone_${r}.pub; wait"
done
say "measured in $(($(date +%s) - t0)) s; logs in $L"

# ---- summary -------------------------------------------------------------

# field KEY FILE...: the value of KEY=V on each result line, one per line
field() {
  k=$1
  shift
  cat "$@" 2>/dev/null | grep -E '^(go|go-direct|cyclone|fastdds) ' | tr ' ' '\n' | sed -n "s/^$k=//p"
}

# med: median of the numbers on stdin with [min..max]; "-" if none
med() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "-"; exit }
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    if (NR == 1) printf "%.1f\n", m; else printf "%.1f [%.1f..%.1f]\n", m, v[1], v[NR] }'
}

# first: the median alone of "M [a..b]"
first() { echo "$1" | cut -d' ' -f1; }

# ratio A B: A/B to two decimals, "-" when either is missing
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'
}

# clockpair PUB SUB: latencies (µs) of the samples both files name, by sim
# time; prints p50 and p99 (nearest rank) of one run
clockpair() {
  awk 'NR == FNR { w[$2 " " $3] = $1; next } ($2 " " $3) in w { print ($1 - w[$2 " " $3]) / 1000 }' "$1" "$2" |
    sort -g | awk '{ v[NR] = $1 } END {
      if (NR == 0) exit
      i50 = int((NR * 50 + 99) / 100); i99 = int((NR * 99 + 99) / 100)
      printf "%s %s %d\n", v[i50], v[i99], NR }'
}

name() {
  case $1 in
    go) echo "Go" ;;
    echo) echo "Go echopong" ;;
    direct) echo "Go directping" ;;
    cyclone) echo "Cyclone" ;;
    fastdds) echo "Fast DDS" ;;
  esac
}

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
