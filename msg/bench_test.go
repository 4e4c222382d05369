package msg_test

import (
	"strings"
	"testing"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/nros_bench"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
)

func benchCodec(b *testing.B, m msg.Message, fresh msg.Message, size int) {
	buf := make([]byte, 0, size+1024)
	b.Run("Marshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(size))
		for b.Loop() {
			buf = msg.Marshal(m, true, buf[:0])
		}
	})
	b.Run("EncoderReuse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(size))
		var e cdr.Encoder
		for b.Loop() {
			e.Reset(buf[:0], true)
			m.MarshalCDR(&e)
			buf = e.Bytes()
		}
	})
	data := msg.Marshal(m, true, nil)
	b.Run("Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(size))
		for b.Loop() {
			if err := msg.Unmarshal(data, fresh); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("RoundTrip", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(size))
		for b.Loop() {
			buf = msg.Marshal(m, true, buf[:0])
			if err := msg.Unmarshal(buf, fresh); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkString64B(b *testing.B) {
	benchCodec(b, &std_msgs.String{Data: strings.Repeat("x", 64)}, new(std_msgs.String), 64)
}

func BenchmarkString64KiB(b *testing.B) {
	benchCodec(b, &std_msgs.String{Data: strings.Repeat("x", 64<<10)}, new(std_msgs.String), 64<<10)
}

func BenchmarkClock(b *testing.B) {
	benchCodec(b, &rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: 1, Nanosec: 2}}, new(rosgraph_msgs.Clock), 8)
}

func BenchmarkPayload64KiB(b *testing.B) {
	benchCodec(b, &nros_bench.Payload{StampNs: 1, Data: make([]byte, 64<<10)}, new(nros_bench.Payload), 64<<10)
}
