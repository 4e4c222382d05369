package interop

import "testing"

func TestServedOnce(t *testing.T) {
	samples := []clockSample{{0, 100}, {0, 200}, {0, 300}, {0, 400}, {0, 150}, {0, 250}}
	want := []fire{{200, 0}, {300, 0}, {400, 0}, {250, 0}}
	cases := []struct {
		name    string
		got     []fire
		catchUp bool
		ok      bool
	}{
		{"exact", want, false, true},
		{"skip coalesced 300 into 400", []fire{{200, 0}, {400, 1}, {250, 1}}, false, true},
		{"skip lost a deadline", []fire{{200, 0}, {400, 0}, {250, 0}}, false, false},
		{"skip fired twice", []fire{{200, 0}, {300, 0}, {300, 0}, {400, 0}, {250, 0}}, false, false},
		{"unpublished time", []fire{{200, 0}, {310, 0}, {400, 0}, {250, 0}}, false, false},
		{"catch_up replayed late", []fire{{200, 0}, {400, 1}, {400, 1}, {250, 1}}, true, true},
		{"catch_up missed one", []fire{{200, 0}, {400, 1}, {250, 1}}, true, false},
		{"time went back without a jump", []fire{{300, 0}, {200, 0}, {400, 0}, {250, 0}}, false, false},
	}
	for _, c := range cases {
		err := servedOnce(samples, want, c.got, c.catchUp)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
