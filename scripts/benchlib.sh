# scripts/benchlib.sh — the summary helpers of the side-by-side benchmarks
# (bench.sh, bench-secure.sh, bench-clock.sh, bench-zclock.sh source it):
# fields of the result lines, medians with their range, ratios, /clock
# pairing and same-run ratio reports.

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

# pctl: of the numbers on stdin, p50, p99 (nearest rank), the count and
# p90; nothing if none
pctl() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) exit
    i50 = int((NR * 50 + 99) / 100); i90 = int((NR * 90 + 99) / 100); i99 = int((NR * 99 + 99) / 100)
    printf "%s %s %d %s\n", v[i50], v[i99], NR, v[i90] }'
}

# clockpair PUB SUB [FROM]: latencies (µs) of the samples both files name,
# by sim time (from sim second FROM on, 0 by default); prints p50, p99
# (nearest rank), the count and p90 of one run
clockpair() {
  awk -v from="${3:-0}" 'NR == FNR { w[$2 " " $3] = $1; next } $2 >= from && ($2 " " $3) in w { print ($1 - w[$2 " " $3]) / 1000 }' "$1" "$2" | pctl
}

# samerun_report FILE R REF LABEL TAG...: for the lines "TAG p50 p99 N p90"
# of FILE (one per run), the median over R runs of each tag's and REF's
# p50/p90/p99, then per TAG the median and range of its same-run ratios
# to REF (run r over run r), REF named LABEL
samerun_report() {
  f=$1 n=$2 ref=$3 label=$4
  shift 4
  for t in "$@" "$ref"; do
    p50=$(awk -v t="$t" '$1 == t { print $2 }' "$f" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    p90=$(awk -v t="$t" '$1 == t { print $5 }' "$f" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    p99=$(awk -v t="$t" '$1 == t { print $3 }' "$f" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    echo "median over $n runs: $t p50 $p50 µs, p90 $p90 µs, p99 $p99 µs"
  done
  for t in "$@"; do
    for col in 2:p50 5:p90 3:p99; do
      c=${col%%:*} name=${col#*:}
      awk -v c="$c" -v t="$t" -v ref="$ref" '$1 == t { g[++ng] = $c } $1 == ref { y[++ny] = $c } END { for (i = 1; i <= ng && i <= ny; i++) printf "%.3f\n", g[i] / y[i] }' "$f" |
        sort -g | awk -v name="$name" -v t="$t" -v lbl="$label" '{ v[NR] = $1 } END { if (NR) printf "ratio %s/%s %s: median %.2f (range %.2f-%.2f over %d same-run pairs)\n", t, lbl, name, v[int((NR + 1) / 2)], v[1], v[NR], NR }'
    done
  done
}
