#!/bin/sh
# scripts/soak.sh [DURATION] — the long service and action soak (#19):
# two DDS participants on real loopback sockets in one process, for
# DURATION (default 3m): 32 concurrent callers on one service client and,
# at the same time, action goals with cancels in waves of 20 concurrent
# SendGoal (the first right after WaitForServer). Prints calls, goals,
# lost, stuck, p50/p99 latency and goroutines before/after; exits non-zero
# if anything was lost or stuck or a goroutine was left. Runs inside
# interop/netns (loopback only); NETNS_UDP_LOSS=N drops N % of the UDP
# datagrams there. The CI-sized soaks run in the normal test run
# (TestServiceSoakConcurrentCallers, TestActionSoakConcurrentGoals).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
d=${1:-3m}
bin=$(mktemp -d /tmp/nros-soak.XXXXXX)
trap 'rm -rf "$bin"' EXIT
(cd "$root" && go test -c -o "$bin/nros.test" .)
echo "load: $(uptime)"
set +e
NROS_SOAK=$d "$root/interop/netns" "$bin/nros.test" -test.run '^TestSoakLong$' -test.v -test.count=1 -test.timeout 1h >"$bin/out" 2>&1
rc=$?
set -e
grep 'soak:' "$bin/out" | sed 's/^ *soak_test.go:[0-9]*: //'
grep -E '^(--- FAIL|FAIL|panic)' "$bin/out" && tail -40 "$bin/out"
echo "exit $rc"
exit $rc
