package endpoint

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// Random links and configurations: a reliable writer whose history cannot
// overwrite anything (KEEP_ALL, or KEEP_LAST deeper than the run) delivers
// every sample exactly once and in order; best effort delivers an
// increasing subsequence.
func TestPropertyRandomLinks(t *testing.T) {
	seeds := 40
	if s := os.Getenv("NROS_PROPERTY_SEEDS"); s != "" {
		seeds, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		seeds = 8
	}
	var delivered, resends, fragResends uint64
	defer func() {
		t.Logf("delivered %d, resends %d, fragment resends %d", delivered, resends, fragResends)
	}()
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 77))
		drop := rng.Float64() * 0.5
		dup := rng.Float64() * 0.3
		delay := int64(rng.IntN(10)+1) * 1e6
		reliable := rng.IntN(4) != 0
		keepAll := rng.IntN(2) == 0
		size := []int{16, 64, 1000, 3000, 20000}[rng.IntN(5)]
		count := 300
		if size > 2000 {
			count = 60
		}
		wc := WriterConfig{Reliable: reliable, KeepAll: keepAll, MaxSamples: 8 + rng.IntN(64), Depth: count + 1,
			HeartbeatPeriod: int64(rng.IntN(200)+10) * 1e6, NackResponseDelay: int64(rng.IntN(20)) * 1e6}
		if rng.IntN(2) == 0 {
			wc.FragmentSize, wc.MaxMessageSize = 512, 4000
		}
		rc := ReaderConfig{AckDelay: int64(rng.IntN(20)) * 1e6, Window: 16 + rng.IntN(300), MaxFragmentedSamples: 1 + rng.IntN(6)}
		n := newNet(t, seed, drop, dup, delay)
		p := newPair(t, n, wc, rc, size)
		p.match(reliable, false)
		p.writeN(t, count, size, int64(rng.IntN(5)+1)*1e6)
		n.run(n.now + 120e9)
		delivered += uint64(len(p.col.sns))
		resends += p.w.Stats().Resends
		fragResends += p.w.Stats().FragResends
		if reliable {
			if len(p.col.sns) != count {
				t.Logf("seed %d: drop %.2f dup %.2f delay %d size %d cfg %+v rc %+v", seed, drop, dup, delay, size, wc, rc)
				t.Logf("writer %+v", p.w.Stats())
				t.Logf("reader %+v", p.r.Stats())
			}
			wantRange(t, p.col.sns, 1, wireSN(count))
		} else {
			wantIncreasing(t, p.col.sns)
		}
	}
}
