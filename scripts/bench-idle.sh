#!/bin/bash
# scripts/bench-idle.sh [REPS] [WINDOW_S] [N...] — what an idle participant
# costs as the graph grows, Go against Cyclone DDS, in one run.
#
# For each repetition (default 3), each N (default 10 30 100) and each
# vendor, a fresh loopback-only namespace (interop/netns) gets N idle
# processes: Go is examples/listener (a node with one subscription to
# /chatter, its parameter services, /rosout and /parameter_events, nobody
# publishing), Cyclone is interop/build/chattersub_cyclone (a participant
# with one reliable reader of rt/chatter). After WARMUP_S (default 15 s,
# discovery settles) it measures over WINDOW_S (default 20 s):
#   cpu   user+system time of the N processes (/proc/PID/stat), per
#         process, in % of one core;
#   pkt/s datagrams sent on lo (tx packets in /proc/net/dev of the
#         namespace; a multicast datagram counts once) per process per second;
#   rss   VmRSS per process at the end of the window, MiB (it counts the
#         pages of the binary and shared libraries in every process);
#   pss   proportional set size (smaps_rollup Pss: shared pages divided
#         among the processes that map them), MiB.
# It prints every run, then per N the medians and ranges over the
# repetitions and the Go/Cyclone ratios (median of the per-repetition
# ratios). CPU is counted in clock ticks (10 ms): small figures are coarse,
# and the machine may be shared — read CPU ratios with `uptime` in mind.
# Bounded: REPS x len(N) x 2 x (WARMUP_S + WINDOW_S + a few s).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
R=${1:-3}
W=${2:-20}
shift $(($# < 2 ? $# : 2))
NS=${*:-10 30 100}
WARM=${WARMUP_S:-15}
L=$(mktemp -d /tmp/nros-bench-idle.XXXXXX)
trap 'rm -rf "$L"' EXIT
cyc=$root/interop/build/chattersub_cyclone
[ -x "$cyc" ] || { echo "bench-idle.sh: $cyc missing (sh interop/build.sh)" >&2; exit 77; }
# The Go program is built as nros-go deploys: pure Go, static (CGO_ENABLED=0,
# no libc mapped); CGO_ENABLED=1 measures the toolchain's default on a machine
# with a C compiler, whose dynamic libc adds about 1.5 MiB of RSS a process.
CGO=${CGO_ENABLED:-0}
(cd "$root" && CGO_ENABLED=$CGO go build -o "$L/listener" ./examples/listener)

# phase VENDOR N: runs inside a fresh namespace; prints "cpu pkts rss alive".
cat >"$L/phase.sh" <<'SH'
set -u
vendor=$1 n=$2 warm=$3 win=$4 dir=$5 cyc=$6
rm -f "$dir"/err.*
pids=
for i in $(seq 1 "$n"); do
  if [ "$vendor" = go ]; then
    "$dir/listener" --ros-args -r __node:=idle$i >/dev/null 2>"$dir/err.$i" &
  else
    "$cyc" --quiet --timeout 3600 --node idle$i >/dev/null 2>"$dir/err.$i" &
  fi
  pids="$pids $!"
done
ticks() { # user+system ticks of the processes still alive
  t=0
  for p in $pids; do
    [ -r /proc/$p/stat ] && t=$((t + $(sed 's/.*) //' /proc/$p/stat | awk '{ print $12 + $13 }')))
  done
  echo $t
}
lotx() { awk -F'[: ]+' '$2 == "lo" { print $12 }' /proc/net/dev; } # this namespace's lo (not /sys)
sleep "$warm"
t0=$(ticks); k0=$(lotx); s0=$(date +%s.%N)
sleep "$win"
t1=$(ticks); k1=$(lotx); s1=$(date +%s.%N)
rss=0 pss=0 alive=0
for p in $pids; do
  if [ -r /proc/$p/status ]; then
    alive=$((alive + 1))
    rss=$((rss + $(awk '/^VmRSS:/ { print $2 }' /proc/$p/status)))
    pss=$((pss + $(awk '/^Pss:/ { print $2 }' /proc/$p/smaps_rollup)))
  fi
done
[ "$alive" = "$n" ] || { echo "bench-idle: $vendor N=$n: $alive alive; their errors:" >&2; cat "$dir"/err.* | sort | uniq -c | head -5 >&2; }
for p in $pids; do kill -INT "$p" 2>/dev/null; done
sleep 1
for p in $pids; do kill -KILL "$p" 2>/dev/null; done
wait 2>/dev/null || true
hz=$(getconf CLK_TCK)
awk -v t=$((t1 - t0)) -v k=$((k1 - k0)) -v s0="$s0" -v s1="$s1" -v n="$n" -v hz="$hz" -v rss="$rss" -v pss="$pss" -v alive="$alive" \
  'BEGIN { w = s1 - s0; a = alive ? alive : 1; printf "%.3f %.2f %.1f %.2f %d\n", t / hz / w / n * 100, k / w / n, rss / a / 1024, pss / a / 1024, alive }'
SH

echo "# bench-idle: $R x N in {$NS}, warm-up ${WARM} s, window ${W} s, Go built with CGO_ENABLED=$CGO; $(uptime)"
printf '%-4s %-4s %-8s %10s %10s %9s %9s %6s\n' rep N vendor "cpu%/proc" "pkt/s/proc" "rss MiB" "pss MiB" alive
for r in $(seq 1 "$R"); do
  for n in $NS; do
    for v in go cyclone; do
      out=$("$root/interop/netns" bash "$L/phase.sh" "$v" "$n" "$WARM" "$W" "$L" "$cyc" 2>"$L/phase.err")
      grep '^bench-idle' -A5 "$L/phase.err" >&2 || true
      echo "$r $n $v $out" >>"$L/all"
      # shellcheck disable=SC2086
      printf '%-4s %-4s %-8s %10s %10s %9s %9s %6s\n' "$r" "$n" "$v" $out
    done
  done
done
echo "# load after: $(uptime)"
echo
echo "per N: median (range) of Go | of Cyclone | median (range) of the per-repetition Go/Cyclone ratios"
for n in $NS; do
  line="$n"
  for col in 4 5 6 7; do
    g=$(awk -v n="$n" -v c=$col '$2 == n && $3 == "go" { print $c }' "$L/all" | sort -g)
    c=$(awk -v n="$n" -v c=$col '$2 == n && $3 == "cyclone" { print $c }' "$L/all" | sort -g)
    ratios=$(awk -v n="$n" -v c=$col '$2 == n { v[$1 " " $3] = $c } END { for (k in v) { split(k, a, " "); if (a[2] == "go" && v[a[1] " cyclone"] > 0) print v[k] / v[a[1] " cyclone"] } }' "$L/all" | sort -g)
    med() { awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
    rng() { awk '{ v[NR] = $1 } END { if (NR) printf "%s-%s", v[1], v[NR] }'; }
    rngr() { awk '{ v[NR] = $1 } END { if (NR) printf "%.2f-%.2f", v[1], v[NR] }'; }
    name=$(echo "cpu% pkt/s rss pss" | cut -d' ' -f$((col - 3)))
    line="$line  $name $(echo "$g" | med) ($(echo "$g" | rng)) | $(echo "$c" | med) ($(echo "$c" | rng)) | $(echo "$ratios" | med | xargs printf '%.2f') ($(echo "$ratios" | rngr))"
    [ $col = 7 ] || line="$line;"
  done
  echo "$line"
done
