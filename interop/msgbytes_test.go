package interop

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/builtin_interfaces"
	"github.com/nros-go/nros/msg/dynamic"
	"github.com/nros-go/nros/msg/geometry_msgs"
	"github.com/nros-go/nros/msg/rcl_interfaces"
	"github.com/nros-go/nros/msg/sensor_msgs"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps"
)

// Byte-exactness of the generated message codecs against the vendors' own
// serializers: Cyclone's (idlc-generated type support, dds_write's
// serdata) and Fast CDR's (the Cdr operators rmw_fastrtps_cpp uses). The
// peers msgbytes_cyclone and msgbytes_fastdds fill each message with the
// values of interop/src/msgcheck.h; msgValues below builds the same values
// in Go.

// dynamicTypes knows the definitions of the bundled packages.
var dynamicTypes = sync.OnceValue(dynamic.NewRegistry)

// msgCase is one message type of the byte-exactness test.
type msgCase struct {
	name   string             // --type of the peers
	values func() msg.Message // the msgcheck.h values
	fresh  func() msg.Message // a zero message to decode into
}

func header(sec int32, nanosec uint32, frame string) std_msgs.Header {
	return std_msgs.Header{Stamp: builtin_interfaces.Time{Sec: sec, Nanosec: nanosec}, FrameID: frame}
}

// msgValues mirrors interop/src/msgcheck.h.
func msgValues() []msgCase {
	negZero := math.Copysign(0, -1)
	return []msgCase{
		{"string", func() msg.Message {
			return &std_msgs.String{Data: "Hello, nros! \u00e9\u2713"}
		}, func() msg.Message { return new(std_msgs.String) }},
		{"pose", func() msg.Message {
			return &geometry_msgs.PoseStamped{
				Header: header(1700000000, 123456789, "odom"),
				Pose: geometry_msgs.Pose{
					Position:    geometry_msgs.Point{X: 1.5, Y: -2.25, Z: 1e-300},
					Orientation: geometry_msgs.Quaternion{X: 0, Y: negZero, Z: 0.7071067811865476, W: 0.7071067811865476},
				},
			}
		}, func() msg.Message { return new(geometry_msgs.PoseStamped) }},
		{"imu", func() msg.Message {
			m := &sensor_msgs.Imu{
				Header:             header(-5, 999999999, "imu_link"),
				Orientation:        geometry_msgs.Quaternion{X: 0.1, Y: 0.2, Z: 0.3, W: 0.9},
				AngularVelocity:    geometry_msgs.Vector3{X: -1e-9, Y: 3.25, Z: 6.02214076e23},
				LinearAcceleration: geometry_msgs.Vector3{X: 0, Y: 0, Z: 9.80665},
			}
			for i := range 9 {
				m.OrientationCovariance[i] = float64(i)*0.5 - 1
				m.AngularVelocityCovariance[i] = -float64(i) / 8
				m.LinearAccelerationCovariance[i] = float64(i*i) + 0.03125
			}
			m.LinearAccelerationCovariance[4] = math.Inf(1)
			return m
		}, func() msg.Message { return new(sensor_msgs.Imu) }},
		{"scan", func() msg.Message {
			m := &sensor_msgs.LaserScan{
				Header:         header(42, 500000000, "laser"),
				AngleMin:       -1.5707964,
				AngleMax:       1.5707964,
				AngleIncrement: 0.017453292,
				TimeIncrement:  1e-5,
				ScanTime:       0.1,
				RangeMin:       0.12,
				RangeMax:       30,
				Intensities:    []float32{0.5, 100, 0},
			}
			for i := range 37 {
				m.Ranges = append(m.Ranges, float32(i)*0.25)
			}
			m.Ranges[5], m.Ranges[6] = float32(math.Inf(1)), float32(math.Inf(-1))
			return m
		}, func() msg.Message { return new(sensor_msgs.LaserScan) }},
		{"setparams", func() msg.Message {
			names := []string{"use_sim_time", "rate", "count", "label", "blob", "flags", "ints", "gains", "names", ""}
			m := &rcl_interfaces.SetParameters_Request{Parameters: make([]rcl_interfaces.Parameter, len(names))}
			for i, n := range names {
				m.Parameters[i].Name = n
			}
			v := func(i int, typ uint8) *rcl_interfaces.ParameterValue {
				m.Parameters[i].Value.Type = typ
				return &m.Parameters[i].Value
			}
			v(0, 1).BoolValue = true
			v(1, 3).DoubleValue = 0.1
			v(2, 2).IntegerValue = -9000000000
			v(3, 4).StringValue = "h\u00e9llo"
			v(4, 5).ByteArrayValue = []byte{0, 1, 0xfe, 0xff, 7}
			v(5, 6).BoolArrayValue = []bool{true, false, true}
			v(6, 7).IntegerArrayValue = []int64{1, -2, math.MaxInt64}
			v(7, 8).DoubleArrayValue = []float64{0.5, -1.25}
			v(8, 9).StringArrayValue = []string{"a", "", "ccc"}
			return m
		}, func() msg.Message { return new(rcl_interfaces.SetParameters_Request) }},
	}
}

// leaf is one primitive member of a message: its ROS path
// ("header.stamp.sec") and its value in a canonical text (floats as their
// bits, so -0 and 0 differ).
type leaf struct {
	path  string
	kind  reflect.Kind
	canon string
}

// leaves walks m in definition order through its YAMLFields.
func leaves(m msg.Message) []leaf {
	var out []leaf
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		if v.Kind() == reflect.Pointer {
			if y, ok := v.Interface().(msg.YAMLer); ok {
				for _, f := range y.YAMLFields() {
					p := f.Name
					if path != "" {
						p = path + "." + f.Name
					}
					walk(p, reflect.ValueOf(f.Value))
				}
				return
			}
			walk(path, v.Elem())
			return
		}
		switch v.Kind() {
		case reflect.Struct:
			if !v.CanAddr() {
				c := reflect.New(v.Type()).Elem()
				c.Set(v)
				v = c
			}
			walk(path, v.Addr())
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
			}
		default:
			out = append(out, leaf{path, v.Kind(), canonical(v)})
		}
	}
	walk("", reflect.ValueOf(m))
	return out
}

func canonical(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32:
		return fmt.Sprintf("f32:%08x", math.Float32bits(float32(v.Float())))
	case reflect.Float64:
		return fmt.Sprintf("f64:%016x", math.Float64bits(v.Float()))
	case reflect.String:
		return v.String()
	}
	return fmt.Sprintf("unsupported %v", v.Kind())
}

// peerCanonical turns a value a peer printed (msgcheck.h text form) into
// the canonical text of a Go value of kind k.
func peerCanonical(s string, k reflect.Kind) string {
	switch k {
	case reflect.Float32:
		f, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return "unparsable " + s
		}
		return canonical(reflect.ValueOf(float32(f)))
	case reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return "unparsable " + s
		}
		return canonical(reflect.ValueOf(f))
	}
	return s
}

// checkPeerValues compares the "path=value" lines a peer printed with the
// leaves of want.
func checkPeerValues(t *testing.T, who string, lines []string, want msg.Message) {
	t.Helper()
	w := leaves(want)
	if len(lines) != len(w) {
		t.Errorf("%s printed %d values, want %d", who, len(lines), len(w))
	}
	for i := range min(len(lines), len(w)) {
		path, val, _ := strings.Cut(lines[i], "=")
		if path != w[i].path || peerCanonical(val, w[i].kind) != w[i].canon {
			t.Errorf("%s decoded %s, want %s=%s", who, lines[i], w[i].path, w[i].canon)
		}
	}
}

// checkLeaves compares two messages leaf by leaf (bit-exact floats).
func checkLeaves(t *testing.T, who string, got, want msg.Message) {
	t.Helper()
	g, w := leaves(got), leaves(want)
	if len(g) != len(w) {
		t.Errorf("%s: %d values, want %d", who, len(g), len(w))
		return
	}
	for i := range g {
		if g[i] != w[i] {
			t.Errorf("%s: %s=%s, want %s", who, g[i].path, g[i].canon, w[i].canon)
		}
	}
}

// checkSameSample compares a vendor's serialized sample with ours: the
// encapsulation kind (CDR_LE) must be the same, and the vendor's body must
// be our body followed by at most 3 zero bytes of padding (Cyclone pads to
// 4 and says so in the options, Fast DDS pads the DATA submessage without
// saying so).
func checkSameSample(t *testing.T, who string, theirs, ours []byte) {
	t.Helper()
	if len(theirs) < 4 || theirs[0] != ours[0] || theirs[1] != ours[1] {
		t.Errorf("%s: encapsulation % x, ours % x", who, theirs[:min(4, len(theirs))], ours[:4])
		return
	}
	body, pad := theirs[4:], []byte(nil)
	if len(body) >= len(ours)-4 {
		body, pad = theirs[4:len(ours)], theirs[len(ours):]
	}
	if !bytes.Equal(body, ours[4:]) {
		t.Errorf("%s: body differs at byte %d\n theirs %x\n ours   %x", who, firstByteDiff(body, ours[4:]), theirs[4:], ours[4:])
		return
	}
	if len(pad) > 3 || !bytes.Equal(pad, make([]byte, len(pad))) {
		t.Errorf("%s: %d bytes after the message (% x), want at most 3 zero bytes of padding", who, len(pad), pad)
	}
	if opt := int(theirs[3] & 3); opt != 0 && opt != len(pad) {
		t.Errorf("%s: options say %d padding bytes, there are %d", who, opt, len(pad))
	}
}

func firstByteDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// peerLine returns the value of the line "label=..." among lines.
func peerLine(lines []string, label string) (string, bool) {
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, label+"="); ok {
			return v, true
		}
	}
	return "", false
}

func peerHex(t *testing.T, who string, lines []string, label string) []byte {
	t.Helper()
	h, ok := peerLine(lines, label)
	if !ok {
		t.Fatalf("%s printed no %s= line: %q", who, label, lines)
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("%s: %s=: %v", who, label, err)
	}
	return b
}

// TestMsgBytes checks five generated types against each vendor, both ways:
//
//   - peer to Go: the peer writes the message; the raw sample the Go
//     transport receives (and the peer's own serialization of it) is our
//     encoding of the same values, and msg.Unmarshal gives those values,
//     into the generated type and into a msg/dynamic message alike;
//   - Go to peer: the peer decodes our encoding and prints the values it
//     got (they must be ours) and the bytes it received and its own
//     serialization of what it decoded (both must be ours).
//
// Both ways run in little endian, as every ROS host writes; Go to peer
// also in big endian (both vendors decode CDR_BE), and Fast DDS to Go too
// (Fast CDR writes CDR_BE on request; Cyclone's writer cannot be asked).
func TestMsgBytes(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		for _, c := range msgValues() {
			t.Run(vendor+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				dom := Domain(t)
				tr, err := rtps.New(rtps.Config{DomainID: dom})
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				x := msgExchange{tr: tr, dom: dom, prog: "msgbytes_" + vendor, c: c}
				t.Run("peer_to_go", func(t *testing.T) { x.peerToGo(t, false) })
				t.Run("go_to_peer", func(t *testing.T) { x.goToPeer(t, false) })
				t.Run("go_to_peer_big_endian", func(t *testing.T) { x.goToPeer(t, true) })
				if vendor == "fastdds" {
					t.Run("peer_to_go_big_endian", func(t *testing.T) { x.peerToGo(t, true) })
				}
			})
		}
	}
}

// msgExchange is one message type against one peer program, over one Go
// participant.
type msgExchange struct {
	tr   *rtps.Transport
	dom  int
	prog string
	c    msgCase
}

var (
	msgbytesNode = rmw.NodeInfo{Name: "msgbytes_go", Namespace: "/", Enclave: "/"}
	msgbytesQoS  = rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 1}
)

func (x *msgExchange) topic() string { return "/msgbytes_" + x.c.name }

// peerToGo: the peer writes (CDR_BE when bigEndian), Go receives.
func (x *msgExchange) peerToGo(t *testing.T, bigEndian bool) {
	ours := msg.Marshal(x.c.values(), !bigEndian, nil)
	typeName := x.c.values().TypeName()
	got := make(chan []byte, 1)
	sub, err := x.tr.NewSubscription(msgbytesNode, x.topic(), typeName, msgbytesQoS, func(s rmw.Sample) {
		select {
		case got <- bytes.Clone(s.Data):
		default:
		}
	}, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	args := []string{"pub", "--type", x.c.name, "--domain", strconv.Itoa(x.dom), "--timeout", "60"}
	if bigEndian {
		args = append(args, "--big-endian")
	}
	p := Start(t, x.prog, args...)
	var wire []byte
	select {
	case wire = <-got:
	case <-time.After(60 * time.Second):
		t.Fatalf("no %s sample from %s (matched %d)", x.c.name, x.prog, sub.MatchedPublishers())
	}
	lines, err := p.WaitLines(1, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.Send("done")
	checkSameSample(t, x.prog+" on the wire", wire, ours)
	checkSameSample(t, x.prog+" serializer", peerHex(t, x.prog, lines, "ser"), ours)
	dec := x.c.fresh()
	if err := msg.Unmarshal(wire, dec); err != nil {
		t.Fatalf("msg.Unmarshal of %s's sample: %v", x.prog, err)
	}
	checkLeaves(t, "decoded "+x.prog+" sample", dec, x.c.values())
	if again := msg.Marshal(dec, !bigEndian, nil); !bytes.Equal(again, ours) {
		t.Errorf("re-encoding the decoded sample: %x, want %x", again, ours)
	}
	// msg/dynamic, driven by the definition, agrees both ways.
	dt, err := dynamicTypes().Type(typeName)
	if err != nil {
		t.Fatal(err)
	}
	dm := dt.New()
	if err := msg.Unmarshal(wire, dm); err != nil {
		t.Fatalf("dynamic decode of %s's sample: %v", x.prog, err)
	}
	checkLeaves(t, "dynamic decode of "+x.prog+"'s sample", dm, x.c.values())
	if again := msg.Marshal(dm, !bigEndian, nil); !bytes.Equal(again, ours) {
		t.Errorf("dynamic re-encoding: %x, want %x", again, ours)
	}
	if code, err := p.Wait(20 * time.Second); err != nil || code != ExitOK {
		t.Errorf("%s pub: exit %d, %v", x.prog, code, err)
	}
}

// goToPeer: Go writes (CDR_BE when bigEndian), the peer decodes, prints
// the values and serializes them again (in little endian).
func (x *msgExchange) goToPeer(t *testing.T, bigEndian bool) {
	sent := msg.Marshal(x.c.values(), !bigEndian, nil)
	ours := msg.Marshal(x.c.values(), true, nil)
	pub, err := x.tr.NewPublisher(msgbytesNode, x.topic(), x.c.values().TypeName(), msgbytesQoS, rmw.EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	p := Start(t, x.prog, "sub", "--type", x.c.name, "--domain", strconv.Itoa(x.dom), "--timeout", "60")
	if err := p.WaitStderr("matched 1 publisher", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if !waitFor(30*time.Second, func() bool { return pub.MatchedSubscriptions() >= 1 }) {
		t.Fatalf("the Go writer did not match %s's reader", x.prog)
	}
	// The peer takes the first sample and exits; publish until it has one.
	deadline := time.Now().Add(30 * time.Second)
	for !p.Exited() && time.Now().Before(deadline) {
		if err := pub.Publish(sent); err != nil {
			t.Fatal(err)
		}
		waitFor(500*time.Millisecond, p.Exited)
	}
	if code, err := p.Wait(10 * time.Second); err != nil || code != ExitOK {
		t.Fatalf("%s sub: exit %d, %v", x.prog, code, err)
	}
	lines := p.Lines()
	if len(lines) < 3 || lines[len(lines)-1] != "end" {
		t.Fatalf("%s printed %q, want raw=, the values, ser= and end", x.prog, lines)
	}
	// Cyclone keeps a received sample normalized to the host's byte order
	// (it swaps a CDR_BE one in place on receipt): its raw= is then ours
	// in little endian. Fast DDS hands its type support the bytes as sent.
	raw := sent
	if strings.HasSuffix(x.prog, "_cyclone") {
		raw = ours
	}
	checkSameSample(t, x.prog+" received", peerHex(t, x.prog, lines, "raw"), raw)
	checkSameSample(t, x.prog+" re-serialized", peerHex(t, x.prog, lines, "ser"), ours)
	checkPeerValues(t, x.prog, lines[1:len(lines)-2], x.c.values())
}
