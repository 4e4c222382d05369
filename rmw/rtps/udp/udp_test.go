package udp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestPorts(t *testing.T) {
	cases := []struct {
		domain, id            int
		spdp, umc, meta, user uint16
	}{
		{0, 0, 7400, 7401, 7410, 7411},
		{0, 1, 7400, 7401, 7412, 7413},
		{0, 31, 7400, 7401, 7472, 7473},
		{1, 0, 7650, 7651, 7660, 7661},
		{7, 2, 9150, 9151, 9164, 9165},
		{232, MaxParticipantID, 65400, 65401, 65410 + 2*MaxParticipantID, 65411 + 2*MaxParticipantID},
	}
	for _, c := range cases {
		p, err := PortsFor(c.domain)
		if err != nil {
			t.Fatal(err)
		}
		if p.SPDPMulticast() != c.spdp || p.UserMulticast() != c.umc || p.MetaUnicast(c.id) != c.meta || p.UserUnicast(c.id) != c.user {
			t.Errorf("domain %d id %d: got %d %d %d %d", c.domain, c.id, p.SPDPMulticast(), p.UserMulticast(), p.MetaUnicast(c.id), p.UserUnicast(c.id))
		}
	}
	for _, d := range []int{-1, 233, 1000} {
		if _, err := PortsFor(d); err == nil {
			t.Errorf("domain %d accepted", d)
		}
	}
}

func TestParseRange(t *testing.T) {
	cases := []struct {
		in   string
		want Range
		ok   bool
	}{
		{"", RangeLocalhost, true},
		{"SYSTEM_DEFAULT", RangeLocalhost, true},
		{"localhost", RangeLocalhost, true},
		{" SUBNET ", RangeSubnet, true},
		{"OFF", RangeOff, true},
		{"LAN", RangeLocalhost, false},
	}
	for _, c := range cases {
		r, err := ParseRange(c.in)
		if (err == nil) != c.ok || (c.ok && r != c.want) {
			t.Errorf("ParseRange(%q) = %v, %v", c.in, r, err)
		}
	}
	if RangeSubnet.String() != "SUBNET" || RangeOff.String() != "OFF" || RangeLocalhost.String() != "LOCALHOST" {
		t.Error("Range.String")
	}
}

func TestStaticPeers(t *testing.T) {
	got := ParseStaticPeers(" 127.0.0.1; localhost;;127.0.0.2 ;")
	want := []string{"127.0.0.1", "localhost", "127.0.0.2"}
	if len(got) != len(want) {
		t.Fatalf("got %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q", got)
		}
	}
	addrs, err := ResolvePeers(context.Background(), append(got, "::1", "::ffff:127.0.0.3"))
	if err == nil {
		t.Error("IPv6 peer accepted silently")
	}
	wantA := []string{"127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.3"}
	if len(addrs) != len(wantA) {
		t.Fatalf("addrs %v", addrs)
	}
	for i, a := range addrs {
		if a.String() != wantA[i] {
			t.Errorf("addr %d = %v", i, a)
		}
	}
	if len(ParseStaticPeers("")) != 0 {
		t.Error("empty")
	}
}

func read(t *testing.T, c Conn) (string, netip.AddrPort) {
	t.Helper()
	buf := make([]byte, 100)
	n, src, err := c.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n]), src
}

func TestMemUnicastMulticast(t *testing.T) {
	m := NewMemNetwork()
	a, err := m.ListenUnicast(7410)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ListenUnicast(7410); err == nil {
		t.Fatal("port bound twice")
	}
	b, _ := m.ListenUnicast(0)
	if err := a.WriteTo([]byte("hi"), b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if s, src := read(t, b); s != "hi" || src != a.LocalAddr() {
		t.Fatalf("got %q from %v", s, src)
	}
	g1, _ := m.ListenMulticast(SPDPGroup, 7400, []string{"lo"})
	g2, _ := m.ListenMulticast(SPDPGroup, 7400, []string{"lo"})
	if _, err := m.ListenMulticast(Loopback, 7400, []string{"lo"}); err == nil {
		t.Fatal("unicast group accepted")
	}
	a.WriteTo([]byte("mc"), netip.AddrPortFrom(SPDPGroup, 7400))
	for _, g := range []Conn{g1, g2} {
		if s, src := read(t, g); s != "mc" || src != a.LocalAddr() {
			t.Fatalf("got %q from %v", s, src)
		}
	}
	// Sending to nobody is not an error (UDP).
	if err := a.WriteTo([]byte("x"), netip.AddrPortFrom(Loopback, 9)); err != nil {
		t.Fatal(err)
	}
	g2.Close()
	a.WriteTo([]byte("mc2"), netip.AddrPortFrom(SPDPGroup, 7400))
	if s, _ := read(t, g1); s != "mc2" {
		t.Fatal(s)
	}
	// Close unblocks a reader and frees the port.
	done := make(chan error)
	go func() { _, _, err := a.ReadFrom(make([]byte, 10)); done <- err }()
	a.Close()
	if err := <-done; err != ErrClosed {
		t.Fatalf("ReadFrom after Close: %v", err)
	}
	if err := a.WriteTo([]byte("x"), b.LocalAddr()); err != ErrClosed {
		t.Fatalf("WriteTo after Close: %v", err)
	}
	if c, err := m.ListenUnicast(7410); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
	}
	a.Close() // idempotent
}

func TestMemDropAndQueue(t *testing.T) {
	m := &MemNetwork{QueueLen: 2}
	n := 0
	m.Drop = func(src, dst netip.AddrPort, b []byte) bool { n++; return n%2 == 0 }
	a, _ := m.ListenUnicast(1)
	b, _ := m.ListenUnicast(2)
	for i := 0; i < 6; i++ {
		a.WriteTo([]byte{byte('0' + i)}, b.LocalAddr())
	}
	// 0, 2, 4 pass the drop filter; the queue holds only two of them.
	if s, _ := read(t, b); s != "0" {
		t.Fatal(s)
	}
	if s, _ := read(t, b); s != "2" {
		t.Fatal(s)
	}
	del, drop := m.Counts()
	if del != 2 || drop != 4 {
		t.Fatalf("delivered %d dropped %d", del, drop)
	}
}

func TestListenParticipantMem(t *testing.T) {
	m := NewMemNetwork()
	p, _ := PortsFor(0)
	blocker, _ := m.ListenUnicast(7411) // id 0 user port taken
	defer blocker.Close()
	meta, user, id, err := ListenParticipant(m, p, 3)
	if err != nil || id != 1 || meta.LocalAddr().Port() != 7412 || user.LocalAddr().Port() != 7413 {
		t.Fatalf("id %d err %v", id, err)
	}
	// the meta port of id 0 was released again
	if c, err := m.ListenUnicast(7410); err != nil {
		t.Fatal("meta port of id 0 leaked")
	} else {
		c.Close()
	}
	_, _, id2, _ := ListenParticipant(m, p, 3)
	if id2 != 2 {
		t.Fatalf("second participant id %d", id2)
	}
	if _, _, _, err := ListenParticipant(m, p, 1); err == nil {
		t.Fatal("expected no free id")
	}
}

// TestSystemLoopback uses real sockets bound to 127.0.0.1 and sends only to
// 127.0.0.1.
func TestSystemLoopback(t *testing.T) {
	s := System{Bind: Loopback}
	p, _ := PortsFor(211) // unusual domain: avoid clashing with real DDS apps
	meta, user, id, err := ListenParticipant(s, p, 10)
	if err != nil {
		t.Skipf("no free ports: %v", err)
	}
	defer meta.Close()
	defer user.Close()
	meta2, user2, id2, err := ListenParticipant(s, p, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer meta2.Close()
	defer user2.Close()
	if id2 <= id {
		t.Fatalf("ids %d then %d", id, id2)
	}
	if meta.LocalAddr().Addr() != Loopback || meta.LocalAddr().Port() != p.MetaUnicast(id) {
		t.Fatalf("meta bound to %v", meta.LocalAddr())
	}
	if err := meta.WriteTo([]byte("ping"), meta2.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if s, src := read(t, meta2); s != "ping" || src != meta.LocalAddr() {
		t.Fatalf("%q from %v", s, src)
	}
	done := make(chan error)
	go func() { _, _, err := user.ReadFrom(make([]byte, 10)); done <- err }()
	user.Close()
	select {
	case err := <-done:
		if err != ErrClosed {
			t.Fatalf("read after close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock ReadFrom")
	}
}

// onlyLoopback reports whether lo has multicast and no other interface
// exists: the namespace made by interop/netns.
func onlyLoopback() bool {
	ifs, err := net.Interfaces()
	if err != nil {
		return false
	}
	for _, ifi := range ifs {
		if ifi.Name != "lo" {
			return false
		}
	}
	return InterfaceHasMulticast("lo")
}

func TestSystemMulticastLoopback(t *testing.T) {
	if !onlyLoopback() {
		t.Skip("needs a namespace with only lo, multicast on (run under interop/netns)")
	}
	s := System{Bind: Loopback}
	g1, err := s.ListenMulticast(SPDPGroup, 7400, []string{"lo"})
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	g2, err := s.ListenMulticast(SPDPGroup, 7400, []string{"lo"})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if err := g1.WriteTo([]byte("spdp"), netip.AddrPortFrom(SPDPGroup, 7400)); err != nil {
		t.Fatal(err)
	}
	for _, g := range []Conn{g1, g2} {
		if s, _ := read(t, g); s != "spdp" {
			t.Fatal(s)
		}
	}
	if got := MulticastInterfaces(); len(got) != 1 || got[0] != "lo" {
		t.Fatalf("MulticastInterfaces = %v", got)
	}
}

// TestCheckStaticPeer: ROS_STATIC_PEERS entries that cannot be a host or an
// IPv4 address are refused, with the entry named, before any lookup.
func TestCheckStaticPeer(t *testing.T) {
	good := []string{"127.0.0.1", "localhost", "10.0.0.2", "::ffff:127.0.0.3", "robot-1.local", "host.example.org."}
	bad := []string{"10.0.0.1:7400", "[::1]:7400", "::1", "fe80::1", "999.1.1.1", "1.2.3", "bad_host!", "-x", "a..b", "robot 1", ""}
	for _, p := range good {
		if err := CheckStaticPeer(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
	for _, p := range bad {
		err := CheckStaticPeer(p)
		if err == nil {
			t.Errorf("%q accepted", p)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", p)) {
			t.Errorf("%q: error does not name it: %v", p, err)
		}
	}
	// ResolvePeers skips them (no lookup) and reports each.
	addrs, err := ResolvePeers(context.Background(), []string{"127.0.0.1", "10.0.0.1:7400", "bad_host!"})
	if len(addrs) != 1 || addrs[0] != Loopback {
		t.Fatalf("addrs %v", addrs)
	}
	if err == nil || !strings.Contains(err.Error(), `"10.0.0.1:7400"`) || !strings.Contains(err.Error(), `"bad_host!"`) {
		t.Fatalf("err %v", err)
	}
}

// FuzzCheckStaticPeer: any ROS_STATIC_PEERS entry is accepted or refused
// without a panic; an accepted entry is an IPv4 address or a plain host
// name.
func FuzzCheckStaticPeer(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "localhost", "10.0.0.1:7400", "fe80::1", "a.b-c.d", "999.1.1.1", "x..y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckStaticPeer(p) != nil {
			return
		}
		if a, err := netip.ParseAddr(p); err == nil {
			if !a.Unmap().Is4() {
				t.Fatalf("%q accepted: not IPv4", p)
			}
			return
		}
		if strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != "" {
			t.Fatalf("%q accepted as a host name", p)
		}
	})
}
