package wire

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// decoded is what decoding a batch gives, message by message: each
// transport message and, for a FRAME, the network messages of its payload
// with the error that ended them.
type decoded struct {
	m      TransportMessage
	n      int
	err    error
	net    []NetworkMessage
	netErr error
}

// decodeFresh decodes b with the package's functions (new messages).
func decodeFresh(b []byte) []decoded {
	var out []decoded
	for len(b) > 0 {
		m, n, err := DecodeTransport(b)
		d := decoded{m: m, n: n, err: err}
		if fr, ok := m.(*Frame); ok && err == nil {
			d.netErr = DecodeFrame(fr.Payload, func(nm NetworkMessage) error {
				d.net = append(d.net, nm)
				return nil
			})
		}
		out = append(out, d)
		if err != nil {
			break
		}
		b = b[n:]
	}
	return out
}

// checkScratch decodes b into sc and holds every message, while it is
// valid, to want (decodeFresh's). The messages that are not the
// Scratch's (all but the FRAME and the PUSHes) must stay as they are
// after later decodes: they are checked again at the end.
func checkScratch(t *testing.T, sc *Scratch, b []byte, want []decoded) {
	t.Helper()
	type keptMsg struct{ got, want any }
	var kept []keptMsg
	defer func() {
		for _, k := range kept {
			if !reflect.DeepEqual(k.got, k.want) {
				t.Fatalf("a message that is not the Scratch's changed after later decodes: %#v, want %#v", k.got, k.want)
			}
		}
	}()
	i := 0
	for len(b) > 0 {
		m, n, err := sc.DecodeTransport(b)
		if i >= len(want) {
			t.Fatalf("scratch decodes more messages than %d", len(want))
		}
		w := want[i]
		i++
		if n != w.n || (err == nil) != (w.err == nil) || (err != nil && err.Error() != w.err.Error()) {
			t.Fatalf("message %d: scratch n=%d err=%v, fresh n=%d err=%v", i, n, err, w.n, w.err)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(m, w.m) {
			t.Fatalf("message %d: scratch %#v, fresh %#v", i, m, w.m)
		}
		if _, ok := m.(*Frame); !ok {
			kept = append(kept, keptMsg{m, w.m})
		}
		if fr, ok := m.(*Frame); ok {
			j := 0
			netErr := sc.DecodeFrame(fr.Payload, func(nm NetworkMessage) error {
				if j >= len(w.net) || !reflect.DeepEqual(nm, w.net[j]) {
					t.Fatalf("message %d, network message %d: scratch %#v, fresh %v", i, j, nm, w.net)
				}
				if _, ok := nm.(*Push); !ok {
					kept = append(kept, keptMsg{nm, w.net[j]})
				}
				j++
				return nil
			})
			if j != len(w.net) || (netErr == nil) != (w.netErr == nil) || (netErr != nil && netErr.Error() != w.netErr.Error()) {
				t.Fatalf("message %d: scratch gave %d network messages and %v, fresh %d and %v", i, j, netErr, len(w.net), w.netErr)
			}
		}
		b = b[n:]
	}
	if i != len(want) {
		t.Fatalf("scratch decodes %d messages, fresh %d", i, len(want))
	}
}

// scratchSeeds: a PUSH with every field the Scratch reuses set (both
// timestamps, encoding, source info, attachment, an unknown extension),
// one with none, a DEL and a REQUEST, framed.
func scratchSeeds(tb testing.TB) (full, bare []byte) {
	id, err := NewZenohID([]byte{1, 2, 3, 4})
	if err != nil {
		tb.Fatal(err)
	}
	frame := func(sn uint32, ms ...NetworkMessage) []byte {
		var p []byte
		for _, m := range ms {
			if p, err = AppendNetwork(p, m); err != nil {
				tb.Fatal(err)
			}
		}
		b, err := AppendTransport(nil, &Frame{Reliable: true, SN: sn, Priority: PriorityData, Payload: p})
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	full = frame(1,
		&Push{WireExpr: WireExpr{Suffix: "0/clock/t/h"}, QoS: QoSFromByte(0x05), Timestamp: &Timestamp{Time: 7, ID: id}, NodeID: 3,
			Body: &Put{Timestamp: &Timestamp{Time: 9, ID: id}, Encoding: Encoding{ID: 2, Schema: []byte("s")},
				SourceInfo: &SourceInfo{ID: EntityGlobalID{ZID: id, EID: 5}, SN: 6}, Attachment: []byte{1, 2, 3},
				Unknown: []Ext{{ID: 0x0d | ExtEncZ64, Z64: 4}}, Payload: []byte{0, 1, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}}},
		&Push{WireExpr: WireExpr{Scope: 3, SenderMapping: true}, Body: &Del{Timestamp: &Timestamp{Time: 1, ID: id}}},
		&Request{ID: 4, WireExpr: WireExpr{Suffix: "0/svc"}, Timestamp: &Timestamp{Time: 2, ID: id}, Query: &Query{}},
		&Response{RequestID: 4, WireExpr: WireExpr{Suffix: "0/svc"}, Timestamp: &Timestamp{Time: 3, ID: id},
			Body: &Reply{Body: &Put{Timestamp: &Timestamp{Time: 4, ID: id}, SourceInfo: &SourceInfo{ID: EntityGlobalID{ZID: id, EID: 8}, SN: 9},
				Attachment: []byte{4}, Payload: []byte("reply")}}},
		&Push{WireExpr: WireExpr{Suffix: "0/clock/t/h"}, Body: &Put{Timestamp: &Timestamp{Time: 5, ID: id},
			SourceInfo: &SourceInfo{ID: EntityGlobalID{ZID: id, EID: 6}, SN: 7}, Payload: []byte("after")}},
		&Declare{Body: &DeclareSubscriber{ID: 1, WireExpr: WireExpr{Suffix: "0/declared"}}})
	bare = frame(2,
		&Push{WireExpr: WireExpr{Suffix: "0/clock/t/h"}, Body: &Put{Payload: []byte{}}},
		&Push{WireExpr: WireExpr{Suffix: "0/other"}, Body: &Put{Payload: []byte{9}}},
		&Push{WireExpr: WireExpr{Scope: 3, SenderMapping: true}, Body: &Put{Payload: []byte{8}}})
	return full, bare
}

// A Scratch decodes what the package's functions decode, whatever it
// decoded before: no field of an earlier message stays behind.
func TestScratchDecodesAsFresh(t *testing.T) {
	full, bare := scratchSeeds(t)
	var sc Scratch
	for _, b := range [][]byte{full, bare, full, full, bare, bare, full} {
		checkScratch(t, &sc, b, decodeFresh(b))
	}
}

// The same key suffix again is the string the Scratch kept, not a new
// one; the messages it decodes into are its own, not new.
func TestScratchReusesAndAllocatesNothing(t *testing.T) {
	_, bare := scratchSeeds(t)
	b := bare[:len(bare):len(bare)]
	var sc Scratch
	decodeAll := func() {
		m, _, err := sc.DecodeTransport(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.DecodeFrame(m.(*Frame).Payload, func(NetworkMessage) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	decodeAll()
	if got := testing.AllocsPerRun(100, decodeAll); got != 0 {
		t.Errorf("a frame of PUSH/PUT decoded into a Scratch allocates %.1f times, want 0", got)
	}
	m, _, _ := sc.DecodeTransport(b)
	var keys []string
	var pushes []*Push
	_ = sc.DecodeFrame(m.(*Frame).Payload, func(nm NetworkMessage) error {
		p := nm.(*Push)
		keys = append(keys, p.WireExpr.Suffix)
		pushes = append(pushes, p)
		return nil
	})
	if pushes[0] != pushes[1] || pushes[0] != &sc.push {
		t.Error("the PUSHes are not the Scratch's own")
	}
	if keys[0] != "0/clock/t/h" || keys[1] != "0/other" || keys[2] != "" {
		t.Errorf("keys %q", keys)
	}
}

// FuzzScratchDecode: after any batch a, a Scratch decodes any batch b as
// the package's functions do, message by message.
func FuzzScratchDecode(f *testing.F) {
	full, bare := scratchSeeds(f)
	f.Add(full, bare)
	f.Add(bare, full)
	batches, _, _ := seeds(f)
	for i := 1; i < len(batches); i++ {
		f.Add(batches[i-1], batches[i])
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var sc Scratch
		for len(a) > 0 {
			m, n, err := sc.DecodeTransport(a)
			if err != nil {
				break
			}
			if fr, ok := m.(*Frame); ok {
				_ = sc.DecodeFrame(fr.Payload, func(NetworkMessage) error { return nil })
			}
			a = a[n:]
		}
		checkScratch(t, &sc, b, decodeFresh(b))
	})
}

// A Scratch keeps at most maxKeys PUSH key suffixes and maxKeyBytes of
// them, and none of other messages; a key read again is the string it
// kept.
func TestScratchKeysBounded(t *testing.T) {
	var sc Scratch
	push := func(key string) string {
		b, err := AppendNetwork(nil, &Push{WireExpr: WireExpr{Suffix: key}, Body: &Put{Payload: []byte{}}})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := sc.DecodeFrame(b, func(m NetworkMessage) error { got = m.(*Push).WireExpr.Suffix; return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := push("a/b")
	if again := push("a/b"); unsafe.StringData(again) != unsafe.StringData(first) {
		t.Error("a key read again is a new string")
	}
	for i := range 3 * maxKeys {
		if k := fmt.Sprintf("k/%d", i); push(k) != k {
			t.Fatalf("key %q decoded wrong", k)
		}
		if len(sc.keys) > maxKeys {
			t.Fatalf("%d keys kept, at most %d", len(sc.keys), maxKeys)
		}
	}
	long := strings.Repeat("x", 30<<10)
	for i := range 10 {
		if k := fmt.Sprintf("%s/%d", long, i); push(k) != k {
			t.Fatalf("long key %d decoded wrong", i)
		}
		n := 0
		for k := range sc.keys {
			n += len(k)
		}
		if n != sc.keyBytes || n > maxKeyBytes {
			t.Fatalf("%d bytes of keys kept (counted %d), at most %d", n, sc.keyBytes, maxKeyBytes)
		}
	}
	b, err := AppendNetwork(nil, &Declare{Body: &DeclareSubscriber{ID: 1, WireExpr: WireExpr{Suffix: "d/e/c/l"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.DecodeFrame(b, func(NetworkMessage) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, ok := sc.keys["d/e/c/l"]; ok {
		t.Error("a declaration's key was kept")
	}
}

// Release lets go of what the decoded messages point into (the batch, or
// a reassembly buffer), keeping the keys.
func TestScratchRelease(t *testing.T) {
	full, _ := scratchSeeds(t)
	var sc Scratch
	m, _, err := sc.DecodeTransport(full)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.DecodeFrame(m.(*Frame).Payload, func(NetworkMessage) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if sc.put.Payload == nil || sc.frame.Payload == nil || len(sc.keys) == 0 {
		t.Fatal("nothing decoded into the Scratch")
	}
	sc.Release()
	if sc.frame.Payload != nil || sc.put.Payload != nil || sc.put.Attachment != nil || sc.push.Body != nil || len(sc.keys) == 0 {
		t.Errorf("after Release: frame %v, put %+v, push %+v, %d keys", sc.frame.Payload, sc.put, sc.push, len(sc.keys))
	}
}

// Clone copies every byte and pointer of a PUSH: nothing of the copy
// changes when the original's memory is reused.
func TestPushClone(t *testing.T) {
	full, _ := scratchSeeds(t)
	var sc Scratch
	m, _, err := sc.DecodeTransport(full)
	if err != nil {
		t.Fatal(err)
	}
	buf := slices.Clone(m.(*Frame).Payload)
	var clones, want []*Push
	if err := sc.DecodeFrame(buf, func(nm NetworkMessage) error {
		if p, ok := nm.(*Push); ok {
			clones = append(clones, p.Clone())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_ = DecodeFrame(slices.Clone(buf), func(nm NetworkMessage) error {
		if p, ok := nm.(*Push); ok {
			want = append(want, p)
		}
		return nil
	})
	clear(buf)
	sc.Release()
	if len(clones) != 3 || !reflect.DeepEqual(clones, want) {
		t.Fatalf("clones %#v, want %#v", clones, want)
	}
}

// The seeds decode whole: every message of them is compared.
func TestScratchSeedsDecode(t *testing.T) {
	full, bare := scratchSeeds(t)
	for _, b := range [][]byte{full, bare} {
		for _, d := range decodeFresh(b) {
			if d.err != nil || d.netErr != nil {
				t.Fatalf("seed does not decode: %v, %v", d.err, d.netErr)
			}
		}
	}
	if n := len(decodeFresh(full)[0].net); n != 6 {
		t.Fatalf("full seed: %d network messages, want 6", n)
	}
}
