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
# Step 2 also runs staticcheck (installed with `go install` if missing) and
# cross-builds the library, the CLI and the examples with CGO_ENABLED=0 for
# linux/{amd64,arm64,arm}, darwin/arm64 and windows/amd64.
#
# Tests run with -json; scripts/testsum prints go test's own ok/FAIL lines,
# the output of failed tests and a count of the tests run, passed, failed
# and skipped. A test skipped under the race detector is run once more
# without it; what still skips is listed, and with CI=true it fails the run
# (every test runs in CI, or it is deleted).
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
staticcheck=$(command -v staticcheck || echo "$(go env GOPATH)/bin/staticcheck")
if [ ! -x "$staticcheck" ]; then
  go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
  staticcheck="$(go env GOPATH)/bin/staticcheck"
fi
"$staticcheck" ./...
echo "gofmt, go vet, staticcheck: clean"
# Compile every test binary now, so that nothing needs the network later.
go test -count=1 -run '^$' ./... >/dev/null

step "cross-build (CGO_ENABLED=0): library, CLI, examples"
crossfail=
for target in linux/amd64 linux/arm64 linux/arm darwin/arm64 windows/amd64; do
  if CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/} go build ./...; then
    echo "ok  	$target"
  else
    echo "FAIL	$target"
    crossfail="$crossfail $target"
  fi
done
[ -z "$crossfail" ] || { echo "test.sh: the cross-build failed for:$crossfail" >&2; exit 1; }
# A DDS-only build (-tags nros_nozenoh) compiles, vets and refuses Zenoh.
go vet -tags nros_nozenoh .
go test -count=1 -tags nros_nozenoh -run '^TestNoZenohBuild$' . | grep -q '^ok' || { echo "test.sh: the nros_nozenoh build failed its test" >&2; exit 1; }
echo "ok  	-tags nros_nozenoh"
# The benchmark build with the wake marks (-tags nrosstamp, scripts/bench-wake.sh) compiles, vets
# and takes its marks.
go vet -tags nrosstamp ./internal/wakestamp ./rmw/rtps ./rmw/zenoh/link ./bench/clocklat
go test -count=1 -tags nrosstamp ./internal/wakestamp ./bench/clocklat

step "go test -race ./... (in a loopback-only network namespace)"
# The interop package runs on its own, after the others: its real-time
# checks against peer processes should not share 2 cores with race tests.
pkgs=$(go list ./... | grep -v '/interop$')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/testsum" ./scripts/testsum
ns=interop/netns
if ! interop/netns true 2>/dev/null; then
  ns=
  echo "test.sh: WARNING: cannot create a network namespace (needs root or user namespaces):" >&2
  echo "test.sh: WARNING: running outside one; socket tests stay on 127.0.0.1, interop tests skip" >&2
  if [ "${CI:-}" = true ] && [ "$peers_ok" = 1 ]; then echo "test.sh: in CI the namespace is required" >&2; exit 1; fi
fi
status=0
$ns go test -json -race -count=1 -timeout 15m $pkgs | "$tmp/testsum" -skipped "$tmp/skip1" -label "tests (race)" || status=1
$ns go test -json -race -count=1 -timeout 15m ./interop/ | "$tmp/testsum" -skipped "$tmp/skip2" -label "interop tests (race)" || status=1
[ "$status" = 0 ] || { echo "test.sh: tests failed" >&2; exit 1; }

# A test that skips under the race detector (allocation counts, which
# sync.Pool makes random there) runs once more without it.
cat "$tmp/skip1" "$tmp/skip2" >"$tmp/skipped"
if [ -s "$tmp/skipped" ]; then
  step "tests skipped under -race, without it"
  : >"$tmp/still"
  for pkg in $(cut -f1 "$tmp/skipped" | sort -u); do
    names=$(awk -F'\t' -v p="$pkg" '$1 == p { printf "%s%s", sep, $2; sep = "|" }' "$tmp/skipped")
    $ns go test -json -count=1 -timeout 15m -run "^($names)\$" "$pkg" |
      "$tmp/testsum" -skipped "$tmp/one" -label "tests (no race) in $pkg" || status=1
    cat "$tmp/one" >>"$tmp/still"
  done
  [ "$status" = 0 ] || { echo "test.sh: tests failed" >&2; exit 1; }
  if [ -s "$tmp/still" ]; then
    echo "test.sh: these tests skipped in every run:" >&2
    sed 's/^/  /' "$tmp/still" >&2
    if [ "${CI:-}" = true ]; then echo "test.sh: in CI no test may skip" >&2; exit 1; fi
  fi
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
