package interop

// Issue #19, items 1 to 3, from outside: a raw-datagram sender writes
// crafted RTPS datagrams (forged SPDP, SEDP and HEARTBEAT) to a Go node's
// loopback ports inside the namespace, UDP sinks stand in for the
// addresses forged announcements name, and real Cyclone DDS / Fast DDS
// talkers show whether the node still hears real peers.
//
//	TestHostileSPDPFlood     20 000 forged participants, then a real talker
//	TestHostileReflection    forged announcements naming sinks
//	TestHostileSpoofHeartbeat a forged HEARTBEAT with the talker's GUID

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/rtps/discovery"
	"github.com/nros-go/nros/rmw/rtps/udp"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// ---- the raw-datagram sender ------------------------------------------------

// rawSender writes crafted datagrams from its own socket on 127.0.0.1, to
// loopback destinations only.
type rawSender struct {
	t     testing.TB
	c     *net.UDPConn
	sent  int
	bytes int
}

func newRawSender(t testing.TB) *rawSender {
	t.Helper()
	RequireNamespace(t)
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	c.SetWriteBuffer(4 << 20)
	t.Cleanup(func() { c.Close() })
	return &rawSender{t: t, c: c}
}

func (s *rawSender) send(to netip.AddrPort, b []byte) {
	if !to.Addr().IsLoopback() {
		s.t.Fatalf("raw sender: %v is not loopback", to)
	}
	if _, err := s.c.WriteToUDPAddrPort(b, to); err == nil {
		s.sent++
		s.bytes += len(b)
	}
}

// rtpsHeader is "RTPS", version 2.3, the given vendor and GUID prefix.
func rtpsHeader(prefix [12]byte) []byte {
	return append([]byte{'R', 'T', 'P', 'S', 2, 3, 0x01, 0x0f}, prefix[:]...)
}

// submsg appends a little-endian submessage with the given id and flags
// (the E flag is added).
func submsg(b []byte, id, flags byte, body []byte) []byte {
	b = append(b, id, flags|1, 0, 0)
	binary.LittleEndian.PutUint16(b[len(b)-2:], uint16(len(body)))
	return append(b, body...)
}

// param appends one PL_CDR_LE parameter, padded to 4.
func param(b []byte, pid uint16, v []byte) []byte {
	n := (len(v) + 3) &^ 3
	b = binary.LittleEndian.AppendUint16(b, pid)
	b = binary.LittleEndian.AppendUint16(b, uint16(n))
	b = append(b, v...)
	return append(b, make([]byte, n-len(v))...)
}

func locatorBytes(port uint16) []byte {
	v := binary.LittleEndian.AppendUint32(nil, 1) // LOCATOR_KIND_UDPv4
	v = binary.LittleEndian.AppendUint32(v, uint32(port))
	v = append(v, make([]byte, 12)...)
	return append(v, 127, 0, 0, 1)
}

// forgedSPDP is an SPDP DATA byte by byte: participant prefix in domain
// dom, every locator at 127.0.0.1:port, an infinite lease, all SEDP
// endpoints, USER_DATA "enclave=/;".
func forgedSPDP(prefix [12]byte, dom int, port uint16) []byte {
	var pl []byte
	pl = append(pl, 0, 3, 0, 0) // PL_CDR_LE
	pl = param(pl, 0x0015, []byte{2, 3})
	pl = param(pl, 0x0016, []byte{0x01, 0x0f})
	pl = param(pl, 0x0050, append(prefix[:], 0, 0, 1, 0xc1))
	pl = param(pl, 0x0032, locatorBytes(port)) // metatraffic unicast
	pl = param(pl, 0x0031, locatorBytes(port)) // default unicast
	pl = param(pl, 0x0058, binary.LittleEndian.AppendUint32(nil, 0x3f))
	pl = param(pl, 0x0002, []byte{0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff}) // infinite
	pl = param(pl, 0x000f, binary.LittleEndian.AppendUint32(nil, uint32(dom)))
	pl = param(pl, 0x002c, append(binary.LittleEndian.AppendUint32(nil, 10), "enclave=/;"...))
	pl = param(pl, 0x0001, nil)
	body := []byte{0, 0, 16, 0, 0x00, 0x01, 0x00, 0xc7, 0x00, 0x01, 0x00, 0xc2, 0, 0, 0, 0, 1, 0, 0, 0}
	return submsg(rtpsHeader(prefix), 0x15, 0x04, append(body, pl...))
}

// forgedHeartbeat is a HEARTBEAT from writer (prefix + entity) to the
// participant dst: first..last, count, not final.
func forgedHeartbeat(writer wire.GUID, dst wire.GuidPrefix, reader wire.EntityID, first, last int64, count uint32) []byte {
	b := rtpsHeader(writer.Prefix)
	b = submsg(b, 0x0e, 0, dst[:]) // INFO_DST
	body := append(append([]byte{}, reader[:]...), writer.Entity[:]...)
	sn := func(v int64) []byte {
		x := binary.LittleEndian.AppendUint32(nil, uint32(v>>32))
		return binary.LittleEndian.AppendUint32(x, uint32(v))
	}
	body = append(body, sn(first)...)
	body = append(body, sn(last)...)
	body = binary.LittleEndian.AppendUint32(body, count)
	return submsg(b, 0x07, 0, body)
}

// ---- sinks --------------------------------------------------------------------

// sinks are UDP sockets on 127.0.0.1 counting what arrives.
type sinks struct {
	conns  []*net.UDPConn
	mu     sync.Mutex
	dgrams []int     // per sink
	bytes  []int     // per sink
	at     [][]int64 // per sink: arrival times (ns since start)
	start  time.Time
	wg     sync.WaitGroup
}

func newSinks(t testing.TB, n int) *sinks {
	t.Helper()
	s := &sinks{dgrams: make([]int, n), bytes: make([]int, n), at: make([][]int64, n), start: time.Now()}
	for i := range n {
		c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
		if err != nil {
			t.Fatal(err)
		}
		s.conns = append(s.conns, c)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			buf := make([]byte, 65536)
			for {
				k, _, err := c.ReadFromUDPAddrPort(buf)
				if err != nil {
					return
				}
				s.mu.Lock()
				s.dgrams[i]++
				s.bytes[i] += k
				s.at[i] = append(s.at[i], int64(time.Since(s.start)))
				s.mu.Unlock()
			}
		}()
	}
	t.Cleanup(s.close)
	return s
}

func (s *sinks) port(i int) uint16 { return s.conns[i].LocalAddr().(*net.UDPAddr).AddrPort().Port() }

func (s *sinks) close() {
	for _, c := range s.conns {
		c.Close()
	}
	s.wg.Wait()
}

// totals returns the datagrams and bytes all sinks got.
func (s *sinks) totals() (dgrams, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.conns {
		dgrams += s.dgrams[i]
		bytes += s.bytes[i]
	}
	return
}

// between counts the datagrams sink i got in [from, to) after start.
func (s *sinks) between(i int, from, to time.Duration) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.at[i] {
		if a >= int64(from) && a < int64(to) {
			n++
		}
	}
	return n
}

// ---- a Go node as a process -------------------------------------------------

var goBuilds sync.Map // package path -> *goBuild

type goBuild struct {
	once sync.Once
	path string
	err  error
}

// goBinary builds a Go main package once per test process (without -race:
// its memory is what is measured) into a per-user temp directory.
func goBinary(t testing.TB, pkg string) string {
	t.Helper()
	v, _ := goBuilds.LoadOrStore(pkg, &goBuild{})
	b := v.(*goBuild)
	b.once.Do(func() {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("nros-interop-%d", os.Getuid()))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.err = err
			return
		}
		tmp := filepath.Join(dir, fmt.Sprintf("%s.%d", filepath.Base(pkg), os.Getpid()))
		out, err := exec.Command("go", "build", "-o", tmp, pkg).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
			return
		}
		// Replaced atomically: other test processes may run it.
		b.path = filepath.Join(dir, filepath.Base(pkg))
		b.err = os.Rename(tmp, b.path)
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// goListener is examples/listener running in domain dom.
type goListener struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	heard []time.Time // when each "I heard" line arrived
	out   strings.Builder
	done  chan struct{}
}

func startGoListener(t *testing.T, dom int) *goListener {
	t.Helper()
	RequireNamespace(t)
	bin := goBinary(t, "github.com/nros-go/nros/examples/listener")
	l := &goListener{done: make(chan struct{})}
	l.cmd = exec.Command(bin)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NROS_TRANSPORT=") && !strings.HasPrefix(kv, "ROS_DOMAIN_ID=") {
			env = append(env, kv)
		}
	}
	l.cmd.Env = append(env, "ROS_DOMAIN_ID="+strconv.Itoa(dom))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	l.cmd.Stdout, l.cmd.Stderr = w, w
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	go func() {
		defer close(l.done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			l.mu.Lock()
			if strings.Contains(sc.Text(), "I heard") {
				l.heard = append(l.heard, time.Now())
			} else if l.out.Len() < 64<<10 {
				l.out.WriteString(sc.Text() + "\n")
			}
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.cmd.Process.Kill()
		l.cmd.Wait()
		<-l.done
		if t.Failed() {
			t.Logf("listener output:\n%s", l.output())
		}
	})
	return l
}

func (l *goListener) firstHeard() (time.Time, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.heard) == 0 {
		return time.Time{}, 0
	}
	return l.heard[0], len(l.heard)
}

func (l *goListener) output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.String()
}

// rss returns the current and peak resident set size of process pid, in
// bytes (VmRSS, VmHWM).
func rss(pid int) (cur, peak int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			cur = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return cur, peak, nil
}

// portBound reports whether something holds 127.0.0.1:port.
func portBound(port uint16) bool {
	c, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port)))
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// ---- the scenarios ------------------------------------------------------------

// TestHostileSPDPFlood: 20 000 forged participants (infinite leases,
// locators at 16 sinks) hit a Go listener process; then a real talker
// starts. The listener hears it within 5 s, its RSS stays under 64 MB, and
// the sinks get under 1 % of the flood's bytes.
func TestHostileSPDPFlood(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			dom := Domain(t)
			ports, err := udp.PortsFor(dom)
			if err != nil {
				t.Fatal(err)
			}
			lis := startGoListener(t, dom)
			meta := ports.MetaUnicast(0) // the first participant of the domain
			if !waitFor(10*time.Second, func() bool { return portBound(meta) }) {
				t.Fatalf("the listener did not bind %d", meta)
			}
			time.Sleep(500 * time.Millisecond) // its initial announcements
			pid := lis.cmd.Process.Pid
			base, _, _ := rss(pid)

			sk := newSinks(t, 16)
			snd := newRawSender(t)
			var peakDuring atomic.Int64
			stop := make(chan struct{})
			var sampler sync.WaitGroup
			sampler.Add(1)
			go func() {
				defer sampler.Done()
				for {
					if cur, _, err := rss(pid); err == nil && cur > peakDuring.Load() {
						peakDuring.Store(cur)
					}
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			to := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), meta)
			const flood = 20000
			floodStart := time.Now()
			for i := range flood {
				var pre [12]byte
				pre[0], pre[1] = 0xee, 0xee
				binary.BigEndian.PutUint64(pre[4:], uint64(i+1)<<8|uint64(dom))
				snd.send(to, forgedSPDP(pre, dom, sk.port(i%16)))
				if i%100 == 99 {
					time.Sleep(2 * time.Millisecond) // about 20 000/s: do not just overflow the socket buffer
				}
			}
			floodTook := time.Since(floodStart)

			// A real talker, started after the flood.
			start := time.Now()
			pub := Start(t, "chatterpub_"+vendor, "--domain", strconv.Itoa(dom), "--count", "100", "--hz", "10", "--timeout", "30")
			if !waitFor(15*time.Second, func() bool { _, n := lis.firstHeard(); return n > 0 }) {
				t.Fatalf("the listener heard nothing from the %s talker in 15 s after the flood", vendor)
			}
			first, _ := lis.firstHeard()
			latency := first.Sub(start)
			time.Sleep(3 * time.Second) // what is still coming to the sinks
			close(stop)
			sampler.Wait()
			_, peak, _ := rss(pid)
			pub.Kill()
			dgrams, bytes := sk.totals()
			t.Logf("flood: %d datagrams, %d bytes in %v; talker heard %v after its start; listener RSS %.1f MB before, %.1f MB peak during, VmHWM %.1f MB; "+
				"to the forged locators: %d datagrams, %d bytes (%.3f %% of the flood)",
				snd.sent, snd.bytes, floodTook.Round(time.Millisecond), latency.Round(time.Millisecond),
				float64(base)/1e6, float64(peakDuring.Load())/1e6, float64(peak)/1e6, dgrams, bytes, 100*float64(bytes)/float64(snd.bytes))
			if snd.sent < flood*9/10 {
				t.Fatalf("only %d of %d forged datagrams sent", snd.sent, flood)
			}
			if latency > 5*time.Second {
				t.Errorf("the %s talker was heard %v after it started, want within 5 s", vendor, latency)
			}
			if peak >= 64<<20 {
				t.Errorf("listener peak RSS %d bytes, want under 64 MB", peak)
			}
			if bytes*100 >= snd.bytes {
				t.Errorf("%d bytes went to the forged locators for %d sent: 1 %% or more", bytes, snd.bytes)
			}
		})
	}
}

// TestHostileReflection: forged announcements name UDP sinks. The node
// must not keep talking to them: (a) one forged SPDP gets a few probes
// and then nothing; (b) 5 000 forged participants naming one sink get the
// per-locator back-off; (c) a forged participant that also forges SEDP
// (so it is confirmed, with a writer on /chatter that the node's
// subscription matches) gets a bounded, decaying amount that stops.
func TestHostileReflection(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	t.Parallel()
	dom := Domain(t)
	g := newGoNode(t, dom, "go_listener")
	if _, err := nros.NewSubscription[std_msgs.String](g.node, "/chatter", nros.DefaultQoS(), func(*std_msgs.String) {}); err != nil {
		t.Fatal(err)
	}
	g.spin()
	time.Sleep(500 * time.Millisecond)
	me := g.tr.GuidPrefix()
	metaTo := g.tr.MetaAddr()
	sk := newSinks(t, 3)
	snd := newRawSender(t)
	start := sk.start
	prefix := func(tag byte, i int) [12]byte {
		var p [12]byte
		p[0], p[1], p[2] = 0xee, 0xef, tag
		binary.BigEndian.PutUint64(p[4:], uint64(i+1))
		return p
	}
	// (b) first: it evicts older unconfirmed entries, (a) among them.
	for i := range 5000 {
		snd.send(metaTo, forgedSPDP(prefix('b', i), dom, sk.port(1)))
		if i%100 == 99 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	// (a)
	snd.send(metaTo, forgedSPDP(prefix('a', 0), dom, sk.port(0)))
	// (c): SPDP, then its SEDP: a HEARTBEAT of its publications writer and
	// the announcement of a reliable writer on /chatter at the sink.
	pc := prefix('c', 0)
	snd.send(metaTo, forgedSPDP(pc, dom, sk.port(2)))
	e := wire.NewEndpointData(true)
	e.EndpointGUID = wire.GUID{Prefix: pc, Entity: wire.NewEntityID(1, wire.EntityKindWriterNoKey)}
	e.TopicName, e.TypeName = "rt/chatter", "std_msgs::msg::dds_::String_"
	discovery.SetQoS(&e, rmw.QoS{Reliability: rmw.Reliable, History: rmw.KeepLast, Depth: 10}, true)
	e.UnicastLocators = []wire.Locator{wire.LoopbackUDPv4(sk.port(2))}
	payload, err := e.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b wire.Builder
	b.Reset(nil, wire.Header{Version: wire.ProtocolVersion21, Vendor: wire.VendorEclipse, Prefix: pc})
	b.InfoDst(me)
	b.Data(&wire.Data{ReaderID: wire.EntityIDSEDPPublicationsReader, WriterID: wire.EntityIDSEDPPublicationsWriter, WriterSN: 1, SerializedPayload: payload})
	b.Heartbeat(&wire.Heartbeat{ReaderID: wire.EntityIDSEDPPublicationsReader, WriterID: wire.EntityIDSEDPPublicationsWriter, FirstSN: 1, LastSN: 1, Count: 1})
	snd.send(metaTo, b.Bytes())
	if !waitFor(5*time.Second, func() bool {
		for _, ep := range g.tr.Endpoints("/chatter") {
			if ep.Publisher && !ep.Local {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the forged writer was not discovered (the test would prove nothing)\n%s", graphReport(g))
	}
	t.Logf("forged: %d datagrams, %d bytes", snd.sent, snd.bytes)

	const watch = 75 * time.Second
	time.Sleep(watch - time.Since(start))
	sec := func(s int) time.Duration { return time.Duration(s) * time.Second }
	for i, name := range []string{"one forged SPDP", "5000 forged SPDP, one sink", "forged SPDP+SEDP"} {
		t.Logf("%s: %d datagrams in 75 s; per 15 s: %d %d %d %d %d", name, sk.between(i, 0, watch),
			sk.between(i, 0, sec(15)), sk.between(i, sec(15), sec(30)), sk.between(i, sec(30), sec(45)),
			sk.between(i, sec(45), sec(60)), sk.between(i, sec(60), sec(75)))
	}
	st := g.tr.Stats().Discovery
	t.Logf("discovery: probes %d sent, %d limited; evicted %d; unconfirmed expired %d; SEDP sends limited %d",
		st.ProbesSent, st.ProbesLimited, st.ParticipantsEvicted, st.UnconfirmedExpired, st.SEDPSendsLimited)
	if n := sk.between(0, 0, watch); n == 0 || n > 4 || sk.between(0, sec(10), watch) != 0 {
		t.Errorf("one forged SPDP: %d datagrams to its sink, %d after 10 s; want 1..4 and none after 10 s", n, sk.between(0, sec(10), watch))
	}
	if n := sk.between(1, 0, watch); n > 8 || sk.between(1, sec(30), watch) != 0 {
		t.Errorf("5000 forged SPDP naming one sink: %d datagrams to it, %d after 30 s; want at most 8 and none after 30 s", n, sk.between(1, sec(30), watch))
	}
	early, late := sk.between(2, 0, sec(30)), sk.between(2, sec(45), watch)
	if n := sk.between(2, 0, watch); n > 150 || late*3 > early || sk.between(2, sec(65), watch) > 1 {
		t.Errorf("forged SPDP+SEDP: %d datagrams to its sink (%d in the first 30 s, %d after 45 s, %d after 65 s); want at most 150, decaying, stopped",
			n, early, late, sk.between(2, sec(65), watch))
	}
}

// TestHostileSpoofHeartbeat: a talker publishes /chatter to a Go
// subscription; HEARTBEATs forged with the talker's writer GUID claim
// that its history starts 10^6 ahead (and carry a huge count). The
// subscription keeps receiving the talker, in order, without a hole.
func TestHostileSpoofHeartbeat(t *testing.T) {
	RequireNamespace(t)
	Peers(t)
	for _, vendor := range Vendors {
		t.Run(vendor, func(t *testing.T) {
			t.Parallel()
			dom := Domain(t)
			g := newGoNode(t, dom, "go_listener")
			var mu sync.Mutex
			var got []int
			// A deep local queue and writer history: on a loaded machine
			// the executor or the transport may stall for longer than 10
			// samples (0.5 s), and KEEP_LAST 10 would then drop samples
			// as designed; the test is about the forged HEARTBEATs.
			qos := nros.KeepLast(1000)
			sub, err := nros.NewSubscription[std_msgs.String](g.node, "/chatter", qos, func(m *std_msgs.String) {
				n, err := strconv.Atoi(strings.TrimPrefix(m.Data, "Hello World: "))
				if err != nil {
					n = -1
				}
				mu.Lock()
				got = append(got, n)
				mu.Unlock()
			})
			if err != nil {
				t.Fatal(err)
			}
			g.spin()
			count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
			const total = 300
			pub := Start(t, "chatterpub_"+vendor, "--domain", strconv.Itoa(dom), "--count", strconv.Itoa(total), "--hz", "20",
				"--depth", "1000", "--wait-subs", "1", "--timeout", "60")
			if !waitFor(20*time.Second, func() bool { return count() >= 20 }) {
				t.Fatalf("no chatter before the forgery: %d\n%s", count(), graphReport(g))
			}
			var writer wire.GUID
			for _, ep := range g.tr.Endpoints("/chatter") {
				if ep.Publisher && !ep.Local {
					writer = wire.GUIDFromBytes(ep.GID)
				}
			}
			if writer.IsZero() {
				t.Fatal("no remote /chatter writer in the graph")
			}
			snd := newRawSender(t)
			before := count()
			for i := range 10 {
				hb := forgedHeartbeat(writer, g.tr.GuidPrefix(), wire.EntityIDUnknown, 1e6, 1e6+10, 1<<31-1-uint32(i))
				snd.send(g.tr.UserAddr(), hb)
				snd.send(g.tr.MetaAddr(), hb)
				time.Sleep(100 * time.Millisecond)
			}
			t.Logf("forged %d HEARTBEATs of %d bytes with %v's GUID", snd.sent, len(forgedHeartbeat(writer, g.tr.GuidPrefix(), wire.EntityIDUnknown, 1, 1, 1)), writer)
			if !waitFor(5*time.Second, func() bool { return count() >= before+40 }) {
				t.Fatalf("the talker went silent after the forged HEARTBEATs: %d samples before, %d now", before, count())
			}
			last := func() int { mu.Lock(); defer mu.Unlock(); return got[len(got)-1] }
			if !waitFor(30*time.Second, func() bool { return last() == total }) {
				t.Errorf("the last sample arrived is #%d, want #%d", last(), total)
			}
			pub.Kill()
			mu.Lock()
			defer mu.Unlock()
			for i := 1; i < len(got); i++ {
				if got[i] != got[i-1]+1 {
					t.Fatalf("sample #%d follows #%d (a hole or a duplicate; the forgery was at #%d; the subscription's queue overwrote %d)",
						got[i], got[i-1], before, sub.Lost())
				}
			}
			rs := g.tr.Stats()
			t.Logf("%d samples, in order; forged advances reverted: %d", len(got), rs.Guard.JumpsReverted)
			if rs.Guard.JumpsReverted == 0 {
				t.Error("no forged advance reverted: the forgery was not taken in, so the test proves nothing")
			}
		})
	}
}
