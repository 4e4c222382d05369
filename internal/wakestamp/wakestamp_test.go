package wakestamp

import "testing"

// With the tag, Take returns the last Woke and the first Read since the
// Take before, then nothing; without it, always nothing.
func TestTake(t *testing.T) {
	Take()
	Woke()
	Read()
	w1, r1 := Take()
	if !Enabled {
		if w1 != 0 || r1 != 0 {
			t.Fatalf("without the tag Take = %d, %d", w1, r1)
		}
		return
	}
	if w1 == 0 || r1 == 0 || r1 < w1 {
		t.Fatalf("Take = %d, %d: want both, read after woke", w1, r1)
	}
	Read()
	Woke()
	Read()
	w2, r2 := Take()
	if w2 < r2 || r2 <= r1 {
		t.Fatalf("Take = %d, %d: want the last Woke and the first Read", w2, r2)
	}
	if w, r := Take(); w != 0 || r != 0 {
		t.Fatalf("a second Take = %d, %d: want none", w, r)
	}
}
