#!/bin/sh
# build.sh [OUTDIR] - builds the interop peers (Cyclone DDS and Fast DDS
# programs, and the zenoh-pico peers of ../shared/zenoh) into OUTDIR
# (default: interop/build next to this script).
#
# * Missing Debian packages are installed when running as root with apt;
#   if the compile packages stay missing it says which and exits 77.
# * idlc generates the Cyclone type support from src/types.idl.
# * Programs compile in parallel; a program is rebuilt only when one of its
#   inputs (its source, the shared headers, the generated types, this
#   script) is newer than the binary, so a second run does nothing.
# Exit: 0 built (or up to date), 1 compile error, 77 prerequisites missing.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$here/src
out=${1:-$here/build}
# needed to compile; then tools the harness uses at run time (netns: ip,
# UDPLoss: nft), Fast DDS's CLI, and ROS 2's test interface files (the
# generator's test runs over them; it fails in CI without them), installed
# when possible but optional here
required="cyclonedds-dev cyclonedds-tools libfastrtps-dev libfastcdr-dev gcc g++ cmake"
optional="fastdds-tools iproute2 nftables ros2-test-interface-files"
programs="clockpub clocksub chatterpub chattersub pingpong"
# what the secure peers' tests need (sros2_keystore.sh: openssl; the
# clear-text check: tcpdump), installed and reported loudly when missing
secure="openssl tcpdump"

say() { echo "build.sh: $*" >&2; }
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing() { m=""; for p in "$@"; do installed "$p" || m="$m $p"; done; echo "$m"; }

need=$(missing $required $optional $secure)
if [ -n "$need" ] && [ "$(id -u 2>/dev/null)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  say "installing$need"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -q $need >/dev/null 2>&1; then
    apt-get update -q >/dev/null 2>&1 || true
    apt-get install -y -q $need >/dev/null 2>&1 || true
  fi
fi
need=$(missing $required)
if [ -n "$need" ]; then
  say "PREREQUISITES MISSING:$need (not installed, and they could not be installed here)"
  exit 77
fi
for tool in idlc gcc g++ cmake; do
  command -v "$tool" >/dev/null 2>&1 || { say "PREREQUISITES MISSING: $tool not on PATH"; exit 77; }
done
# The secure peers (--keystore) need Cyclone's security plugins (Debian ships
# them with libddsc) and the keystore/capture tools; the peers still build
# without them, the Secure tests then fail and say why.
need=$(missing $secure)
[ -z "$need" ] || say "MISSING for the secure peer tests (TestSecure*):$need (could not be installed)"
if ! dpkg-query -L libddsc0debian 2>/dev/null | grep -q 'libdds_security_auth\.so$'; then
  say "MISSING for the secure peer tests: Cyclone's DDS Security plugins (libdds_security_auth.so)"
fi

mkdir -p "$out/gen"
# Several `go test` processes may build at once: one at a time.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$out/.lock"
  flock 9
fi
# stale: TARGET DEPS... -> true when TARGET is missing or older than a dep
stale() {
  target=$1; shift
  [ -e "$target" ] || return 0
  for dep in "$@"; do [ "$dep" -nt "$target" ] && return 0; done
  return 1
}

# Cyclone type support. -t: no XTypes type information, like rmw_cyclonedds
# on Humble; -x final: every type final.
if stale "$out/gen/types.c" "$src/types.idl" "$0"; then
  idlc -t -x final -o "$out/gen" "$src/types.idl"
fi
# The messages of the byte-exactness peers and the serializer benchmark
# (msgtypes.idl includes types.idl; its code needs types.c too).
if stale "$out/gen/msgtypes.c" "$src/msgtypes.idl" "$src/types.idl" "$0"; then
  idlc -t -x final -I "$src" -o "$out/gen" "$src/msgtypes.idl"
fi

warn="-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wno-unused-function"
pids=""
built=""
for p in $programs; do
  bin=$out/${p}_cyclone
  if stale "$bin" "$src/${p}_cyclone.c" "$src/peer.h" "$src/cyclone.h" "$out/gen/types.c" "$out/gen/types.h" "$0"; then
    gcc -std=gnu11 -O2 -g $warn -I"$src" -I"$out/gen" -o "$bin.tmp" \
      "$src/${p}_cyclone.c" "$out/gen/types.c" -lddsc -lm &&
      mv "$bin.tmp" "$bin" &
    pids="$pids $!"
    built="$built ${p}_cyclone"
  fi
  bin=$out/${p}_fastdds
  if stale "$bin" "$src/${p}_fastdds.cpp" "$src/peer.h" "$src/fastdds.hpp" "$0"; then
    g++ -std=c++17 -O2 -g $warn -I"$src" -o "$bin.tmp" \
      "$src/${p}_fastdds.cpp" -lfastrtps -lfastcdr -lpthread -lm &&
      mv "$bin.tmp" "$bin" &
    pids="$pids $!"
    built="$built ${p}_fastdds"
  fi
done
# msgbytes: byte-exactness peers of the generated messages (msgbytes_test.go)
bin=$out/msgbytes_cyclone
if stale "$bin" "$src/msgbytes_cyclone.c" "$src/msgcheck.h" "$src/peer.h" "$src/cyclone.h" "$out/gen/types.c" "$out/gen/msgtypes.c" "$0"; then
  gcc -std=gnu11 -O2 -g $warn -I"$src" -I"$out/gen" -o "$bin.tmp" \
    "$src/msgbytes_cyclone.c" "$out/gen/types.c" "$out/gen/msgtypes.c" -lddsc -lm &&
    mv "$bin.tmp" "$bin" &
  pids="$pids $!"
  built="$built msgbytes_cyclone"
fi
# msgbench: Cyclone's serializer timed on Imu and Image (scripts/bench-msg.sh)
bin=$out/msgbench_cyclone
if stale "$bin" "$src/msgbench_cyclone.c" "$out/gen/types.c" "$out/gen/msgtypes.c" "$0"; then
  gcc -std=gnu11 -O2 -g $warn -I"$src" -I"$out/gen" -o "$bin.tmp" \
    "$src/msgbench_cyclone.c" "$out/gen/types.c" "$out/gen/msgtypes.c" -lddsc -lm &&
    mv "$bin.tmp" "$bin" &
  pids="$pids $!"
  built="$built msgbench_cyclone"
fi
bin=$out/msgbytes_fastdds
if stale "$bin" "$src/msgbytes_fastdds.cpp" "$src/msgcheck.h" "$src/peer.h" "$src/fastdds.hpp" "$0"; then
  g++ -std=c++17 -O2 -g $warn -I"$src" -o "$bin.tmp" \
    "$src/msgbytes_fastdds.cpp" -lfastrtps -lfastcdr -lpthread -lm &&
    mv "$bin.tmp" "$bin" &
  pids="$pids $!"
  built="$built msgbytes_fastdds"
fi
# The service peers: their Cyclone side also needs services.idl.
if stale "$out/gen/services.c" "$src/services.idl" "$0"; then
  idlc -t -x final -o "$out/gen" "$src/services.idl"
fi
if stale "$out/svc_cyclone" "$src/svc_cyclone.c" "$src/peer.h" "$src/cyclone.h" "$out/gen/types.c" "$out/gen/services.c" "$0"; then
  gcc -std=gnu11 -O2 -g $warn -I"$src" -I"$out/gen" -o "$out/svc_cyclone.tmp" \
    "$src/svc_cyclone.c" "$out/gen/types.c" "$out/gen/services.c" -lddsc -lm &&
    mv "$out/svc_cyclone.tmp" "$out/svc_cyclone" &
  pids="$pids $!"
  built="$built svc_cyclone"
fi
if stale "$out/svc_fastdds" "$src/svc_fastdds.cpp" "$src/peer.h" "$src/fastdds.hpp" "$0"; then
  g++ -std=c++17 -O2 -g $warn -I"$src" -o "$out/svc_fastdds.tmp" \
    "$src/svc_fastdds.cpp" -lfastrtps -lfastcdr -lpthread -lm &&
    mv "$out/svc_fastdds.tmp" "$out/svc_fastdds" &
  pids="$pids $!"
  built="$built svc_fastdds"
fi
# The action peer: test_msgs/action/Fibonacci (actions.idl includes
# types.idl for builtin_interfaces Time_; its code needs types.c too).
if stale "$out/gen/actions.c" "$src/actions.idl" "$src/types.idl" "$0"; then
  idlc -t -x final -I "$src" -o "$out/gen" "$src/actions.idl"
fi
if stale "$out/action_cyclone" "$src/action_cyclone.c" "$src/peer.h" "$src/cyclone.h" "$out/gen/types.c" "$out/gen/actions.c" "$0"; then
  gcc -std=gnu11 -O2 -g $warn -I"$src" -I"$out/gen" -o "$out/action_cyclone.tmp" \
    "$src/action_cyclone.c" "$out/gen/types.c" "$out/gen/actions.c" -lddsc -lm &&
    mv "$out/action_cyclone.tmp" "$out/action_cyclone" &
  pids="$pids $!"
  built="$built action_cyclone"
fi
# Its Fast DDS twin (hand-written CDR, rmw_fastrtps's request/reply mapping).
if stale "$out/action_fastdds" "$src/action_fastdds.cpp" "$src/peer.h" "$src/fastdds.hpp" "$0"; then
  g++ -std=c++17 -O2 -g $warn -I"$src" -o "$out/action_fastdds.tmp" \
    "$src/action_fastdds.cpp" -lfastrtps -lfastcdr -lpthread -lm &&
    mv "$out/action_fastdds.tmp" "$out/action_fastdds" &
  pids="$pids $!"
  built="$built action_fastdds"
fi
# The graph listers: Humble layout (types.idl) and Iron/Jazzy layout.
if stale "$out/gen/graph_jazzy.c" "$src/graph_jazzy.idl" "$0"; then
  idlc -t -x final -o "$out/gen" "$src/graph_jazzy.idl"
fi
if stale "$out/graph_cyclone" "$src/graph_cyclone.c" "$src/peer.h" "$out/gen/types.c" "$0"; then
  gcc -std=gnu11 -O2 -g $warn -I"$src" -I"$out/gen" -o "$out/graph_cyclone.tmp" \
    "$src/graph_cyclone.c" "$out/gen/types.c" -lddsc -lm &&
    mv "$out/graph_cyclone.tmp" "$out/graph_cyclone" &
  pids="$pids $!"
  built="$built graph_cyclone"
fi
if stale "$out/graph_cyclone_jazzy" "$src/graph_cyclone.c" "$src/peer.h" "$out/gen/graph_jazzy.c" "$0"; then
  gcc -std=gnu11 -O2 -g $warn -DGRAPH_JAZZY -I"$src" -I"$out/gen" -o "$out/graph_cyclone_jazzy.tmp" \
    "$src/graph_cyclone.c" "$out/gen/graph_jazzy.c" -lddsc -lm &&
    mv "$out/graph_cyclone_jazzy.tmp" "$out/graph_cyclone_jazzy" &
  pids="$pids $!"
  built="$built graph_cyclone_jazzy"
fi
failed=0
for pid in $pids; do wait "$pid" || failed=1; done
if [ "$failed" != 0 ]; then
  say "compile FAILED"
  exit 1
fi
# The zenoh-pico peers (zclockpub zclocksub zchatterpub zchattersub
# zlivewatch) from the shared material next to the project root, as in CI;
# their script builds zenoh-pico once into $out/zpico and a peer only when
# one of its sources changed.
zenoh=$here/../../shared/zenoh/build.sh
if [ ! -f "$zenoh" ]; then
  say "zenoh-pico peers FAILED: $zenoh not found (../shared must sit next to the project root)"
  exit 1
fi
zlog=$out/zenoh-build.log
if ! sh "$zenoh" "$out" >"$zlog" 2>&1; then
  cat "$zlog" >&2
  say "zenoh-pico peers FAILED (log: $zlog)"
  exit 1
fi
for p in zclockpub zclocksub zchatterpub zchattersub zlivewatch; do
  [ -x "$out/$p" ] || { say "zenoh-pico peers FAILED: $out/$p missing"; exit 1; }
done
# This project's own zenoh-pico peers (src/z*.c: a service server, the
# ping-pong of scripts/bench.sh) on the library the script above built,
# with its flags and its rmw_zenoh helpers (zros.h, common.h).
zsrc=$here/../../shared/zenoh/src
psrc=$here/../../shared/peers/src
zflags="-std=gnu11 -O2 -Wall -Wno-unused-function -DZENOH_C_STANDARD=11 -DZENOH_LINUX -DZENOH_COMPILER_GCC -I$zsrc -I$psrc -I$out/zpico/include"
zlibs="$out/zpico/lib/libzenohpico.a -lpthread -ldl -lm"
for p in zsvcserver zpingpong; do
  bin=$out/$p
  if stale "$bin" "$src/$p.c" "$zsrc/zros.h" "$psrc/common.h" "$out/zpico/lib/libzenohpico.a" "$0"; then
    # shellcheck disable=SC2086
    if ! gcc $zflags -o "$bin.tmp" "$src/$p.c" $zlibs; then
      say "zenoh-pico peer $p FAILED to compile"
      exit 1
    fi
    mv "$bin.tmp" "$bin"
    built="$built $p"
  fi
done
if [ -n "$built" ]; then say "built$built in $out"; else say "up to date in $out"; fi
