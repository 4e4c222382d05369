package interop

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/netip"
	"runtime"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/nros-go/nros"
)

// garbage makes datagrams for a participant with GUID prefix dst: random
// bytes, truncated RTPS headers, and RTPS messages of random submessages
// (with random or inconsistent lengths, either endianness, cut at a random
// point) from random writers, from unknown entities of the peer's
// participant, and from the peer's clock writer with undecodable payloads
// and sequence numbers it has already used.
type garbage struct {
	r          *rand.Rand
	dst, peer  [12]byte
	clockEntry [4]byte
}

var submessageIDs = []byte{0x01, 0x06, 0x07, 0x08, 0x09, 0x0c, 0x0d, 0x0e, 0x0f, 0x12, 0x13, 0x15, 0x16, 0x80, 0xff}

func (g *garbage) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

func (g *garbage) header(prefix [12]byte) []byte {
	return append([]byte{'R', 'T', 'P', 'S', 2, 3, 0x01, 0x0f}, prefix[:]...)
}

// submessage returns one submessage: a header whose length field is
// right, random, or zero ("to the end"), and a body.
func (g *garbage) submessage(id, flags byte, body []byte) []byte {
	var order binary.ByteOrder = binary.BigEndian
	if flags&1 != 0 {
		order = binary.LittleEndian
	}
	n := uint16(len(body))
	switch g.r.IntN(6) {
	case 0:
		n = uint16(g.r.Uint32())
	case 1:
		n = 0
	}
	h := []byte{id, flags, 0, 0}
	order.PutUint16(h[2:], n)
	return append(h, body...)
}

// data returns a DATA body from writer wr (entity id) with sequence number
// sn and a payload that cannot decode as a Clock.
func (g *garbage) data(wr [4]byte, sn int64, flags byte) []byte {
	var order binary.ByteOrder = binary.BigEndian
	if flags&1 != 0 {
		order = binary.LittleEndian
	}
	b := make([]byte, 20)
	order.PutUint16(b[2:], 16) // octetsToInlineQos
	copy(b[8:], wr[:])
	order.PutUint32(b[12:], uint32(sn>>32))
	order.PutUint32(b[16:], uint32(sn))
	payload := []byte{0, 1, 0, 0} // CDR_LE, then too few bytes for a Clock
	if g.r.IntN(2) == 0 {
		payload = []byte{byte(g.r.Uint32()), byte(g.r.Uint32()), 0, 0} // an unknown encapsulation
	}
	return append(append(b, payload...), g.bytes(g.r.IntN(8))...)
}

func (g *garbage) next() []byte {
	switch k := g.r.IntN(10); {
	case k == 0:
		return g.bytes(g.r.IntN(1400))
	case k == 1:
		h := g.header(g.peer)
		return h[:g.r.IntN(len(h)+1)]
	default:
		src := g.peer
		if k < 4 {
			copy(src[:], g.bytes(12))
		}
		msg := g.header(src)
		if g.r.IntN(2) == 0 { // INFO_DST to the Go participant
			msg = append(msg, g.submessage(0x0e, byte(g.r.IntN(2)), g.dst[:])...)
		}
		for range 1 + g.r.IntN(4) {
			flags := byte(g.r.Uint32())
			switch c := g.r.IntN(4); {
			case c == 0 && k >= 4: // the real clock writer, garbage payload, an old SN
				msg = append(msg, g.submessage(0x15, flags|0x04, g.data(g.clockEntry, 1+g.r.Int64N(20), flags))...)
			case c == 1: // DATA from an unknown writer
				var wr [4]byte
				copy(wr[:], g.bytes(4))
				msg = append(msg, g.submessage(0x15, flags, g.data(wr, g.r.Int64(), flags))...)
			default:
				id := submessageIDs[g.r.IntN(len(submessageIDs))]
				msg = append(msg, g.submessage(id, flags, g.bytes(g.r.IntN(64)))...)
			}
		}
		if g.r.IntN(3) == 0 { // truncated
			return msg[:g.r.IntN(len(msg)+1)]
		}
		return msg
	}
}

// TestGoNodeSurvivesGarbage: a Go node follows a peer's /clock while 20000
// random and truncated datagrams hit its metatraffic and user ports. It
// must keep following the clock, count the garbage, and, once closed,
// leave no goroutine behind. Not parallel: the goroutine count is the
// process's.
func TestGoNodeSurvivesGarbage(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			dom := Domain(t)
			runtime.GC()
			base := runtime.NumGoroutine() // before the peer: its collectors end with it
			pub := Start(t, "clockpub_"+vendor, "--domain", strconv.Itoa(dom), "--wait-subs", "1", "--wait-timeout", "20",
				"--settle", "0", "--script", "start=100;play 1x 8s")

			g := newGoNode(t, dom, "go_follower", nros.WithParameterOverrides(map[string]any{"use_sim_time": true}))
			clk := g.node.Clock()
			inSim := func() bool { v := clk.Now().Nanoseconds(); return v >= 100e9 && v < 200e9 }
			if !waitFor(20*time.Second, inSim) {
				t.Fatalf("the Go node does not follow the %s clock: ROS time %v", vendor, clk.Now())
			}
			eps := g.tr.Endpoints("/clock")
			var writer [16]byte
			for _, e := range eps {
				if e.Publisher && !e.Local {
					writer = e.GID
				}
			}
			if writer == ([16]byte{}) {
				t.Fatalf("no remote /clock publisher in the graph: %+v", eps)
			}
			// Let the writer get past the sequence numbers that garbage reuses.
			start := clk.Now().Nanoseconds()
			waitFor(5*time.Second, func() bool { return clk.Now().Nanoseconds() > start+300e6 })

			seed := uint64(time.Now().UnixNano())
			gen := &garbage{r: rand.New(rand.NewPCG(seed, 7)), dst: g.tr.GuidPrefix()}
			copy(gen.peer[:], writer[:12])
			copy(gen.clockEntry[:], writer[12:])
			conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			targets := []netip.AddrPort{g.tr.MetaAddr(), g.tr.UserAddr()}
			for _, a := range targets {
				if !a.Addr().IsLoopback() {
					t.Fatalf("target %v is not loopback", a)
				}
			}
			before := g.tr.Stats()
			const count = 20000
			deadline := time.Now().Add(10 * time.Second)
			sent := 0
			for i := 0; i < count && time.Now().Before(deadline); i++ {
				if _, err := conn.WriteToUDPAddrPort(gen.next(), targets[i%len(targets)]); err == nil {
					sent++
				}
				if i%200 == 199 {
					time.Sleep(time.Millisecond) // do not just overflow the socket buffers
				}
			}
			// Still following: ROS time moves on by real samples.
			mid := clk.Now().Nanoseconds()
			if !waitFor(5*time.Second, func() bool { v := clk.Now().Nanoseconds(); return inSim() && v > mid+200e6 }) {
				t.Fatalf("after the garbage (seed %d) ROS time stays at %v", seed, clk.Now())
			}
			after := g.tr.Stats()
			bad := (after.BadDatagrams - before.BadDatagrams) + (after.BadSubmessages - before.BadSubmessages)
			t.Logf("seed %d: %d garbage datagrams sent, %d received in all, %d counted as bad; clock at %v", seed, sent,
				after.Datagrams-before.Datagrams, bad, clk.Now())
			if sent < count/2 || bad < uint64(sent)/10 {
				t.Fatalf("sent %d datagrams, %d counted bad", sent, bad)
			}
			pub.Kill()

			g.close()
			runtime.GC()
			if !waitFor(5*time.Second, func() bool { return runtime.NumGoroutine() <= base }) {
				var buf bytes.Buffer
				pprof.Lookup("goroutine").WriteTo(&buf, 1)
				t.Fatalf("%d goroutines after Close, %d before the peer and the node:\n%s", runtime.NumGoroutine(), base, buf.String())
			}
		})
	}
}
