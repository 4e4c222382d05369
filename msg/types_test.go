package msg_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/nros_bench"
	"github.com/nros-go/nros/msg/rmw_dds_common"
	"github.com/nros-go/nros/msg/rmw_dds_common/humble"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	s = strings.Join(strings.Fields(s), "")
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// GUIDs used in the ros_discovery_info vectors.
var (
	partGUID   = [16]byte{0x01, 0x10, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0x00, 0x00, 0x01, 0xc1}
	readerGUID = [16]byte{0x01, 0x10, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0x00, 0x00, 0x12, 0x04}
	writerGUID = [16]byte{0x01, 0x10, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0x00, 0x00, 0x13, 0x03}
)

const (
	partHex   = "0110a1a2a3a4a5a6a7a8a9aa000001c1"
	readerHex = "0110a1a2a3a4a5a6a7a8a9aa00001204"
	writerHex = "0110a1a2a3a4a5a6a7a8a9aa00001303"
	pad8      = "0000000000000000"
)

// talkerInfo is the ros_discovery_info sample of a participant with the
// node /talker (one reader, one writer), in the current (Jazzy) layout;
// humble.FromCurrent gives the Humble one.
func talkerInfo() *rmw_dds_common.ParticipantEntitiesInfo {
	return &rmw_dds_common.ParticipantEntitiesInfo{
		Gid: rmw_dds_common.GidFromGUID(partGUID),
		NodeEntitiesInfoSeq: []rmw_dds_common.NodeEntitiesInfo{{
			NodeNamespace: "/",
			NodeName:      "talker",
			ReaderGidSeq:  []rmw_dds_common.Gid{rmw_dds_common.GidFromGUID(readerGUID)},
			WriterGidSeq:  []rmw_dds_common.Gid{rmw_dds_common.GidFromGUID(writerGUID)},
		}},
	}
}

type vector struct {
	name  string
	m     msg.Message
	fresh func() msg.Message
	body  string // LE body after 00 01 00 00
}

func vectors() []vector {
	return []vector{
		{"String hello", &std_msgs.String{Data: "hello"}, func() msg.Message { return new(std_msgs.String) },
			"06000000 68656c6c6f00"},
		{"String empty", &std_msgs.String{}, func() msg.Message { return new(std_msgs.String) }, "01000000 00"},
		{"Clock", &rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: 100, Nanosec: 500000000}},
			func() msg.Message { return new(rosgraph_msgs.Clock) }, "64000000 0065cd1d"},
		{"Time negative sec", &builtin_interfaces.Time{Sec: -1, Nanosec: 1},
			func() msg.Message { return new(builtin_interfaces.Time) }, "ffffffff 01000000"},
		{"Duration", &builtin_interfaces.Duration{Sec: 2, Nanosec: 3},
			func() msg.Message { return new(builtin_interfaces.Duration) }, "02000000 03000000"},
		{"Header", &std_msgs.Header{Stamp: builtin_interfaces.Time{Sec: 1, Nanosec: 2}, FrameID: "map"},
			func() msg.Message { return new(std_msgs.Header) }, "01000000 02000000 04000000 6d617000"},
		{"Empty", &std_msgs.Empty{}, func() msg.Message { return new(std_msgs.Empty) }, "00"},
		{"Payload", &nros_bench.Payload{StampNs: 0x0102030405060708, Data: []byte{0xaa, 0xbb, 0xcc}},
			func() msg.Message { return new(nros_bench.Payload) }, "0807060504030201 03000000 aabbcc"},
		{"Payload empty data", &nros_bench.Payload{StampNs: -1},
			func() msg.Message { return new(nros_bench.Payload) }, "ffffffffffffffff 00000000"},
		{"Gid Humble", func() msg.Message { g := humble.GidFromGUID(partGUID); return &g }(),
			func() msg.Message { return new(humble.Gid) }, partHex + pad8},
		{"Gid Jazzy", func() msg.Message { g := rmw_dds_common.GidFromGUID(partGUID); return &g }(),
			func() msg.Message { return new(rmw_dds_common.Gid) }, partHex},
		{"ros_discovery_info Humble", humble.FromCurrent(talkerInfo()),
			func() msg.Message { return new(humble.ParticipantEntitiesInfo) },
			partHex + pad8 + " 01000000" +
				" 02000000 2f00 0000 07000000 74616c6b657200 00" +
				" 01000000" + readerHex + pad8 + " 01000000" + writerHex + pad8},
		{"ros_discovery_info Jazzy", talkerInfo(),
			func() msg.Message { return new(rmw_dds_common.ParticipantEntitiesInfo) },
			partHex + " 01000000" +
				" 02000000 2f00 0000 07000000 74616c6b657200 00" +
				" 01000000" + readerHex + " 01000000" + writerHex},
		{"ros_discovery_info no nodes", &humble.ParticipantEntitiesInfo{Gid: humble.GidFromGUID(partGUID)},
			func() msg.Message { return new(humble.ParticipantEntitiesInfo) }, partHex + pad8 + "00000000"},
	}
}

func TestVectorsLE(t *testing.T) {
	for _, v := range vectors() {
		t.Run(v.name, func(t *testing.T) {
			want := append([]byte{0, 1, 0, 0}, unhex(t, v.body)...)
			got := msg.Marshal(v.m, true, nil)
			if !bytes.Equal(got, want) {
				t.Fatalf("marshal\n got  % x\n want % x", got, want)
			}
			out := v.fresh()
			if err := msg.Unmarshal(want, out); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out, v.m) {
				t.Fatalf("unmarshal got %+v want %+v", out, v.m)
			}
			// Trailing padding (DDS pads to 4) is accepted.
			out = v.fresh()
			if err := msg.Unmarshal(append(want, 0, 0, 0), out); err != nil {
				t.Fatalf("with padding: %v", err)
			}
			if !reflect.DeepEqual(out, v.m) {
				t.Fatalf("with padding got %+v want %+v", out, v.m)
			}
		})
	}
}

func TestDiscoveryInfoSizes(t *testing.T) {
	// The wire doc gives 80 bytes after the header for the Jazzy /talker example.
	if n := len(msg.Marshal(talkerInfo(), true, nil)) - 4; n != 80 {
		t.Fatalf("Jazzy body %d bytes, want 80", n)
	}
	if n := len(msg.Marshal(humble.FromCurrent(talkerInfo()), true, nil)) - 4; n != 104 {
		t.Fatalf("Humble body %d bytes, want 104", n)
	}
}

// The layouts do not interoperate: a Humble sample read as a Jazzy one
// (the registered type) is a participant without nodes and bytes left
// over, not the talker.
func TestDiscoveryInfoLayoutsDiffer(t *testing.T) {
	b := msg.Marshal(humble.FromCurrent(talkerInfo()), true, nil)
	p := new(rmw_dds_common.ParticipantEntitiesInfo)
	if err := msg.Unmarshal(b, p); err == nil && len(p.NodeEntitiesInfoSeq) == 1 &&
		p.NodeEntitiesInfoSeq[0].NodeName == "talker" {
		t.Fatal("Humble sample decoded as Jazzy")
	}
	h := new(humble.ParticipantEntitiesInfo)
	if err := msg.Unmarshal(b, h); err != nil || !reflect.DeepEqual(h.ToCurrent(), talkerInfo()) {
		t.Fatalf("Humble: %v %+v", err, h)
	}
	if m, ok := msg.New("rmw_dds_common/msg/ParticipantEntitiesInfo"); !ok || reflect.TypeOf(m) != reflect.TypeOf(p) {
		t.Fatalf("registered type %T, want the Jazzy layout", m)
	}
}

func TestNodeNameBound(t *testing.T) {
	long := strings.Repeat("n", rmw_dds_common.NodeNameMaxLen+1)
	for _, layout := range []struct {
		name  string
		m     func(*rmw_dds_common.ParticipantEntitiesInfo) msg.Message
		fresh func() msg.Message
	}{
		{"Humble", func(p *rmw_dds_common.ParticipantEntitiesInfo) msg.Message { return humble.FromCurrent(p) },
			func() msg.Message { return new(humble.ParticipantEntitiesInfo) }},
		{"Jazzy", func(p *rmw_dds_common.ParticipantEntitiesInfo) msg.Message { return p },
			func() msg.Message { return new(rmw_dds_common.ParticipantEntitiesInfo) }},
	} {
		p := talkerInfo()
		p.NodeEntitiesInfoSeq[0].NodeName = long
		b, err := msg.MarshalChecked(layout.m(p), true, nil)
		if err == nil {
			t.Errorf("%s: 257-byte node name encoded without error", layout.name)
		}
		if err := msg.Unmarshal(b, layout.fresh()); !errors.Is(err, cdr.ErrTooLong) {
			t.Errorf("%s: 257-byte node name decoded: %v", layout.name, err)
		}
		p.NodeEntitiesInfoSeq[0].NodeName = long[1:]
		b, err = msg.MarshalChecked(layout.m(p), true, nil)
		if err != nil {
			t.Fatalf("%s: 256-byte node name: %v", layout.name, err)
		}
		if err := msg.Unmarshal(b, layout.fresh()); err != nil {
			t.Fatalf("%s: 256-byte node name: %v", layout.name, err)
		}
	}
}

func TestRoundTripBE(t *testing.T) {
	for _, v := range vectors() {
		t.Run(v.name, func(t *testing.T) {
			b := msg.Marshal(v.m, false, nil)
			if !bytes.Equal(b[:4], []byte{0, 0, 0, 0}) {
				t.Fatalf("BE header % x", b[:4])
			}
			out := v.fresh()
			if err := msg.Unmarshal(b, out); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out, v.m) {
				t.Fatalf("got %+v want %+v", out, v.m)
			}
		})
	}
	// Spot-check the BE bytes of String "hello".
	got := msg.Marshal(&std_msgs.String{Data: "hello"}, false, nil)
	if want := unhex(t, "00000000 00000006 68656c6c6f00"); !bytes.Equal(got, want) {
		t.Fatalf("BE hello % x", got)
	}
}

func TestEveryPrefixFails(t *testing.T) {
	for _, v := range vectors() {
		for _, le := range []bool{true, false} {
			full := msg.Marshal(v.m, le, nil)
			for n := 0; n < len(full); n++ {
				out := v.fresh()
				if err := msg.Unmarshal(full[:n], out); err == nil {
					t.Fatalf("%s le=%v: prefix %d of %d decoded without error", v.name, le, n, len(full))
				}
			}
		}
	}
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name string
		data string
		m    msg.Message
		want error
	}{
		{"PL_CDR_LE", "00030000 06000000 68656c6c6f00", new(std_msgs.String), cdr.ErrUnsupportedEncoding},
		{"XCDR2 LE", "00070000 06000000 68656c6c6f00", new(std_msgs.String), cdr.ErrUnsupportedEncoding},
		{"D_CDR2 LE", "00090000 06000000 68656c6c6f00", new(std_msgs.String), cdr.ErrUnsupportedEncoding},
		{"short header", "0001", new(std_msgs.String), cdr.ErrBadHeader},
		{"no NUL", "00010000 05000000 68656c6c6f", new(std_msgs.String), cdr.ErrString},
		{"string too long", "00010000 ffffffff 68", new(std_msgs.String), cdr.ErrTooLong},
		{"huge octet count", "00010000 0000000000000000 ffffffff", new(nros_bench.Payload), cdr.ErrTooLong},
		{"huge node count", "00010000 " + partHex + pad8 + " ffffff0f", new(humble.ParticipantEntitiesInfo), cdr.ErrTooLong},
		{"huge node count Jazzy", "00010000 " + partHex + " ffffff0f", new(rmw_dds_common.ParticipantEntitiesInfo), cdr.ErrTooLong},
		{"huge gid count", "00010000 " + partHex + pad8 + " 01000000 01000000 00 000000 01000000 00 000000 ffff0000",
			new(humble.ParticipantEntitiesInfo), cdr.ErrTooLong},
		{"huge gid count Jazzy", "00010000 " + partHex + " 01000000 01000000 00 000000 01000000 00 000000 ffff0000",
			new(rmw_dds_common.ParticipantEntitiesInfo), cdr.ErrTooLong},
		{"truncated clock", "00010000 64000000 0065cd", new(rosgraph_msgs.Clock), cdr.ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := msg.Unmarshal(unhex(t, tc.data), tc.m)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), tc.m.TypeName()+": cdr: ") {
				t.Fatalf("error should name the type: %v", err)
			}
		})
	}
}

func TestEmptyAcceptsAnyPlaceholder(t *testing.T) {
	if err := msg.Unmarshal([]byte{0, 1, 0, 0, 0x7f}, new(std_msgs.Empty)); err != nil {
		t.Fatal(err)
	}
}

func TestPayloadReusesBuffer(t *testing.T) {
	data := msg.Marshal(&nros_bench.Payload{StampNs: 1, Data: make([]byte, 100)}, true, nil)
	p := &nros_bench.Payload{Data: make([]byte, 0, 128)}
	allocs := testing.AllocsPerRun(50, func() {
		if err := msg.Unmarshal(data, p); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Unmarshal into reused Payload: %v allocs", allocs)
	}
}

func TestMarshalZeroAllocs(t *testing.T) {
	buf := make([]byte, 0, 1024)
	s := &std_msgs.String{Data: strings.Repeat("x", 64)}
	c := &rosgraph_msgs.Clock{Clock: builtin_interfaces.Time{Sec: 1}}
	allocs := testing.AllocsPerRun(100, func() {
		buf = msg.Marshal(s, true, buf[:0])
		buf = msg.Marshal(c, true, buf[:0])
	})
	if allocs != 0 {
		t.Fatalf("Marshal into reused buffer: %v allocs", allocs)
	}
	var cl rosgraph_msgs.Clock
	allocs = testing.AllocsPerRun(100, func() {
		if err := msg.Unmarshal(buf, &cl); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("Unmarshal Clock: %v allocs", allocs)
	}
}

func TestMarshalAppends(t *testing.T) {
	b := msg.Marshal(&std_msgs.String{Data: "a"}, true, []byte{0xee})
	if want := unhex(t, "ee 00010000 02000000 6100"); !bytes.Equal(b, want) {
		t.Fatalf("got % x", b)
	}
}
