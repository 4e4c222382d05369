#!/bin/bash
# scripts/bench-clockcpu.sh [REPS] [SECONDS] — what `nros clock --hz 1000`
# costs in CPU, against the floor of any program that wakes 1000 times a
# second on this machine: a C loop of clock_nanosleep(TIMER_ABSTIME, +1 ms)
# that does nothing else. Per repetition one run of each, interleaved
# (default 5 x 10 s); CPU is user+system time over wall time (/usr/bin/time),
# in % of one core. Prints every run, then the medians, and the
# nros/C ratio of each repetition with their median and range.
# nros clock runs in interop/netns (loopback only), on the DDS transport.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
R=${1:-5}
S=${2:-10}
L=$(mktemp -d /tmp/nros-bench-clockcpu.XXXXXX)
trap 'rm -rf "$L"' EXIT
command -v /usr/bin/time >/dev/null || { echo "bench-clockcpu.sh: needs /usr/bin/time (Debian package time)" >&2; exit 77; }
(cd "$root" && go build -o "$L/nros" ./cmd/nros)
cat >"$L/floor.c" <<'C'
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv) {
  long n = (long)(atof(argv[1]) * 1000);
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  for (long i = 0; i < n; i++) {
    t.tv_nsec += 1000000;
    if (t.tv_nsec >= 1000000000) { t.tv_nsec -= 1000000000; t.tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, 0);
  }
  return 0;
}
C
gcc -O2 -o "$L/floor" "$L/floor.c"
cpu() { tail -1 "$1" | awk '{ printf "%.2f\n", ($1 + $2) / $3 * 100 }'; } # the last line: timeout's status line comes first
for r in $(seq 1 "$R"); do
  /usr/bin/time -f "%U %S %e" -o "$L/c.$r" "$L/floor" "$S"
  "$root/interop/netns" /usr/bin/time -f "%U %S %e" -o "$L/n.$r" timeout -s INT "$S" "$L/nros" clock --hz 1000 --quiet 2>/dev/null || true
  echo "run $r: C floor $(cpu "$L/c.$r") %, nros clock $(cpu "$L/n.$r") %"
done | tee "$L/all.txt"
med() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
c=$(awk '{ print $5 }' "$L/all.txt" | med)
n=$(awk '{ print $9 }' "$L/all.txt" | med)
awk '{ print $9 / $5 }' "$L/all.txt" | sort -g >"$L/ratios"
echo "median: C floor $c %, nros clock $n % of one core at 1 kHz"
echo "nros/C ratio: median $(med <"$L/ratios"), range $(head -1 "$L/ratios")-$(tail -1 "$L/ratios") over $R runs"
