#!/bin/sh
# bench-msg.sh [ROUNDS] - the generated Go codec against Cyclone DDS's own C
# serializer, on sensor_msgs/Imu (the recorded 324-byte sample of
# msg/testdata/bags) and a 640x480 rgb8 sensor_msgs/Image (921,600 data
# bytes): encode (Marshal) and decode (Unmarshal), ns/op and allocs/op.
#
# Go: BenchmarkImu and BenchmarkImage640x480 of ./msg (msg.Marshal into a
# reused buffer, msg.Unmarshal into a reused message). C:
# interop/build/msgbench_cyclone (dds_stream_write into a reused stream;
# dds_stream_normalize_data + dds_stream_read into a reused sample; see
# interop/src/msgbench_cyclone.c). Nothing here opens a socket.
#
# Each of ROUNDS rounds (default 7) runs both programs back to back (which
# one first alternates) for BENCHTIME seconds per case (default 1); the
# ratio Go/Cyclone is taken within each round, and the summary gives its
# median and its range over the rounds, next to the median ns/op of each.
# ROUNDS must be odd for a plain median (even: the upper middle one).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-${ROUNDS:-7}}
benchtime=${BENCHTIME:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

sh "$root/interop/build.sh" >/dev/null 2>"$tmp/build.log" || { cat "$tmp/build.log" >&2; exit 1; }
(cd "$root" && go test -c -o "$tmp/msg.test" ./msg)
cbench=$root/interop/build/msgbench_cyclone
imu=$root/msg/testdata/bags/walker_sensor_msgs.Imu_0.cdr

gobench() {
  (cd "$root/msg" && "$tmp/msg.test" -test.run '^$' -test.bench '^Benchmark(Imu|Image640x480)$/^(Marshal|Unmarshal)$' \
    -test.benchmem -test.benchtime "${benchtime}s") |
    awk -v r="$1" '/^Benchmark/ { n = $1; sub(/-[0-9]+$/, "", n); print "go", r, n, $3, $(NF-1) }'
}
cbench() {
  "$cbench" --imu "$imu" --benchtime "$benchtime" | awk -v r="$1" '{ print "c", r, $1, $3, $(NF-1) }'
}

echo "bench-msg: $rounds rounds of ${benchtime}s per case; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $(go version | cut -d' ' -f3)" >&2
r=1
while [ "$r" -le "$rounds" ]; do
  if [ $((r % 2)) = 1 ]; then gobench "$r"; cbench "$r"; else cbench "$r"; gobench "$r"; fi
  echo "bench-msg: round $r of $rounds done" >&2
  r=$((r + 1))
done >"$tmp/results"

awk '
function median(v, n,   i, j, t) {
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j-1] > v[j]; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
  return v[int(n / 2) + 1]
}
{ key = $3; if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
  if ($1 == "go") { gns[key, $2] = $4; galloc[key] = $5 } else { cns[key, $2] = $4; calloc[key] = $5 }
  rounds[$2] = 1 }
END {
  printf "%-32s %14s %8s %14s %8s %10s %19s\n", "benchmark", "Go ns/op", "allocs", "Cyclone ns/op", "allocs", "Go/Cyclone", "range"
  for (k = 1; k <= nk; k++) {
    key = order[k]; n = 0
    for (r in rounds) if ((key, r) in gns && (key, r) in cns) {
      n++; ratio[n] = gns[key, r] / cns[key, r]; g[n] = gns[key, r]; c[n] = cns[key, r]
    }
    if (n == 0) continue
    lo = hi = ratio[1]; for (i = 2; i <= n; i++) { if (ratio[i] < lo) lo = ratio[i]; if (ratio[i] > hi) hi = ratio[i] }
    printf "%-32s %14.1f %8s %14.1f %8s %10.2f %8.2f .. %6.2f\n", key, median(g, n), galloc[key], median(c, n), calloc[key], median(ratio, n), lo, hi
  }
}' "$tmp/results"
