package msg_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/nros_bench"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/msg/rmw_dds_common/humble"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
)

// fuzzUnmarshal checks, for arbitrary bytes, that Unmarshal returns instead
// of panicking, and that whatever it accepts re-encodes to a sample that
// decodes to the same value and re-encodes to the same bytes.
func fuzzUnmarshal(f *testing.F, fresh func() msg.Message) {
	name := fresh().TypeName()
	for _, v := range vectors() {
		if v.m.TypeName() == name {
			f.Add(msg.Marshal(v.m, true, nil))
			f.Add(msg.Marshal(v.m, false, nil))
		}
	}
	f.Add([]byte{0, 1, 0, 0})
	f.Add([]byte{0, 3, 0, 0, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		first := fresh()
		if err := msg.Unmarshal(data, first); err != nil {
			return
		}
		for _, le := range []bool{true, false} {
			enc := msg.Marshal(first, le, nil)
			second := fresh()
			if err := msg.Unmarshal(enc, second); err != nil {
				t.Fatalf("re-encoded sample does not decode: %v\n% x", err, enc)
			}
			if !reflect.DeepEqual(first, second) {
				t.Fatalf("round trip changed the value:\n%+v\n%+v", first, second)
			}
			if again := msg.Marshal(second, le, nil); !bytes.Equal(again, enc) {
				t.Fatalf("encoding not stable:\n% x\n% x", enc, again)
			}
		}
		_ = msg.ToYAML(first)
	})
}

func FuzzUnmarshalTime(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(builtin_interfaces.Time) })
}

func FuzzUnmarshalDuration(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(builtin_interfaces.Duration) })
}

func FuzzUnmarshalClock(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(rosgraph_msgs.Clock) })
}

func FuzzUnmarshalHeader(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(std_msgs.Header) })
}

func FuzzUnmarshalString(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(std_msgs.String) })
}

func FuzzUnmarshalEmpty(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(std_msgs.Empty) })
}

func FuzzUnmarshalPayload(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(nros_bench.Payload) })
}

func FuzzUnmarshalGid(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(rmw_dds_common.Gid) })
}

func FuzzUnmarshalNodeEntitiesInfo(f *testing.F) {
	f.Add(append([]byte{0, 1, 0, 0}, msg.Marshal(talkerInfo(), true, nil)[4+20:]...))
	fuzzUnmarshal(f, func() msg.Message { return new(rmw_dds_common.NodeEntitiesInfo) })
}

func FuzzUnmarshalParticipantEntitiesInfo(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(rmw_dds_common.ParticipantEntitiesInfo) })
}

func FuzzUnmarshalHumbleGid(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(humble.Gid) })
}

func FuzzUnmarshalHumbleNodeEntitiesInfo(f *testing.F) {
	f.Add(append([]byte{0, 1, 0, 0}, msg.Marshal(humble.FromCurrent(talkerInfo()), true, nil)[4+28:]...))
	fuzzUnmarshal(f, func() msg.Message { return new(humble.NodeEntitiesInfo) })
}

func FuzzUnmarshalHumbleParticipantEntitiesInfo(f *testing.F) {
	fuzzUnmarshal(f, func() msg.Message { return new(humble.ParticipantEntitiesInfo) })
}
