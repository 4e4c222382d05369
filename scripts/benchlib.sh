# scripts/benchlib.sh — the summary helpers of the side-by-side benchmarks
# (bench.sh, bench-secure.sh source it): fields of the result lines,
# medians with their range, ratios, /clock pairing.

# field KEY FILE...: the value of KEY=V on each result line, one per line
field() {
  k=$1
  shift
  cat "$@" 2>/dev/null | grep -E '^(go|go-direct|cyclone|fastdds|zpico) ' | tr ' ' '\n' | sed -n "s/^$k=//p"
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

# clockpair PUB SUB [FROM]: latencies (µs) of the samples both files name,
# by sim time (from sim second FROM on, 0 by default); prints p50 and p99
# (nearest rank) of one run
clockpair() {
  awk -v from="${3:-0}" 'NR == FNR { w[$2 " " $3] = $1; next } $2 >= from && ($2 " " $3) in w { print ($1 - w[$2 " " $3]) / 1000 }' "$1" "$2" |
    sort -g | awk '{ v[NR] = $1 } END {
      if (NR == 0) exit
      i50 = int((NR * 50 + 99) / 100); i99 = int((NR * 99 + 99) / 100)
      printf "%s %s %d\n", v[i50], v[i99], NR }'
}
