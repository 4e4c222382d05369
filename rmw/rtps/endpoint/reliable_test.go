package endpoint

import (
	"testing"
)

func TestReliableLossyInOrder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		seed    uint64
		drop    float64
		dup     float64
		keepAll bool
	}{
		{"clean", 1, 0, 0, false},
		{"drop20", 2, 0.2, 0.1, false},
		{"drop35", 3, 0.35, 0.2, false},
		{"drop50", 4, 0.5, 0.1, false},
		{"keepall-drop30", 5, 0.3, 0.1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNet(t, tc.seed, tc.drop, tc.dup, 5e6)
			wc := WriterConfig{Reliable: true, Depth: 5000, KeepAll: tc.keepAll, MaxSamples: 64}
			p := newPair(t, n, wc, ReaderConfig{}, 64)
			p.match(true, false)
			const count = 2000
			p.writeN(t, count, 64, 1e6)
			n.run(n.now + 30e9)
			wantRange(t, p.col.sns, 1, count)
			ws, rs := p.w.Stats(), p.r.Stats()
			t.Logf("writer %+v", ws)
			t.Logf("reader %+v", rs)
			if tc.drop > 0 && ws.Resends == 0 {
				t.Error("no resends under loss")
			}
			if !p.w.Acknowledged(count) {
				t.Error("last sample not acknowledged")
			}
			if d := p.w.NextDeadline(); d != Never {
				t.Errorf("writer still has work at %d after everything was acknowledged", d)
			}
			if tc.keepAll && ws.HistorySize > 64 {
				t.Errorf("history %d over MaxSamples", ws.HistorySize)
			}
		})
	}
}
