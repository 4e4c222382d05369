package nros

import (
	"testing"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
)

// decodeClock reads what msg.Unmarshal reads and fails where it fails.
func FuzzDecodeClock(f *testing.F) {
	for _, c := range []rosgraph_msgs.Clock{{}, {Clock: builtin_interfaces.Time{Sec: 1, Nanosec: 500}}, {Clock: builtin_interfaces.Time{Sec: -3, Nanosec: 1_500_000_000}}} {
		f.Add(msg.Marshal(&c, true, nil))
		f.Add(msg.Marshal(&c, false, nil))
	}
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2})       // big-endian
	f.Add([]byte{0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 9, 9}) // trailing bytes
	f.Add([]byte{0, 7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0})       // XCDR2: not read
	f.Add([]byte{0, 1, 0, 0, 1, 0, 0})                      // short
	f.Fuzz(func(t *testing.T, b []byte) {
		sec, nanosec, ok := decodeClock(b)
		var m rosgraph_msgs.Clock
		err := msg.Unmarshal(b, &m)
		if ok != (err == nil) {
			t.Fatalf("% x: decodeClock ok %v, msg.Unmarshal %v", b, ok, err)
		}
		if ok && (sec != m.Clock.Sec || nanosec != m.Clock.Nanosec) {
			t.Fatalf("% x: decodeClock %d.%09d, msg.Unmarshal %d.%09d", b, sec, nanosec, m.Clock.Sec, m.Clock.Nanosec)
		}
	})
}
