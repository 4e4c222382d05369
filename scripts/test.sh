#!/usr/bin/env bash
# scripts/test.sh — every test of nros-go, from a fresh machine.
#
# 1. installs what the interop tests need (Debian packages, as root) and builds
#    the project's Cyclone DDS / Fast DDS peers (interop/build.sh);
# 2. downloads the Go modules, builds, checks gofmt and go vet;
# 3. runs `go test -race ./...` inside a fresh network namespace that has only
#    loopback (interop/netns), so no test can send a packet off this machine;
# 4. runs every fuzz target briefly (FUZZTIME: executions or a duration,
#    default 5000x — a count, because a very short -fuzztime duration can end
#    a run with a spurious "context deadline exceeded"; 0 skips).
#
# Where a namespace cannot be made, the tests run outside one: socket tests
# then bind 127.0.0.1 only and the interop tests skip, saying why, loudly.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-5000x}

step() { printf '\n== %s\n' "$*"; }

command -v go >/dev/null || { echo "test.sh: Go 1.26 is required (https://go.dev/dl/)" >&2; exit 1; }
go version

step "interop peers (Cyclone DDS, Fast DDS)"
peers_ok=1
if ! sh interop/build.sh; then
  peers_ok=0
  echo "test.sh: WARNING: the interop peers could not be built; interop tests will skip" >&2
  if [ "${CI:-}" = true ]; then echo "test.sh: in CI the peers are required" >&2; exit 1; fi
fi

step "modules, build, gofmt, vet"
go mod download
go build ./...
unformatted=$(gofmt -l $(find . -name '*.go' -not -path './interop/build/*' -not -path './.git/*'))
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; exit 1; fi
go vet ./...
# Compile every test binary now, so that nothing needs the network later.
go test -count=1 -run '^$' ./... >/dev/null

step "go test -race ./... (in a loopback-only network namespace)"
# The interop package runs on its own, after the others: its real-time
# checks against peer processes should not share 2 cores with race tests.
pkgs=$(go list ./... | grep -v '/interop$')
if interop/netns true 2>/dev/null; then
  interop/netns go test -race -count=1 -timeout 15m $pkgs
  interop/netns go test -race -count=1 -timeout 15m ./interop/
else
  echo "test.sh: WARNING: cannot create a network namespace (needs root or user namespaces):" >&2
  echo "test.sh: WARNING: running outside one; socket tests stay on 127.0.0.1, interop tests skip" >&2
  if [ "${CI:-}" = true ] && [ "$peers_ok" = 1 ]; then echo "test.sh: in CI the namespace is required" >&2; exit 1; fi
  go test -race -count=1 -timeout 15m ./...
fi

if [ "$FUZZTIME" != 0 ]; then
  step "fuzz targets, $FUZZTIME each"
  for pkg in $(go list ./...); do
    dir=$(go list -f '{{.Dir}}' "$pkg")
    for f in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
      echo "-- $pkg $f"
      # Fuzz targets decode bytes; none opens a socket.
      go test -run '^$' -fuzz "^$f\$" -fuzztime "$FUZZTIME" "$pkg" >/tmp/nros-fuzz.log 2>&1 ||
        { cat /tmp/nros-fuzz.log; echo "fuzz target $f in $pkg failed"; exit 1; }
    done
  done
fi
step "all tests passed"
