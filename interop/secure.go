package interop

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Keystore makes an SROS2 keystore in a temporary directory with
// sros2_keystore.sh (openssl, the layout and contents `ros2 security` writes)
// for domain dom, with one enclave per name (e.g. "/talker"), and returns
// its path. env ("K=V") is added to the script's environment, e.g.
// SROS2_RTPS_PROTECTION=ENCRYPT. The test fails when openssl is missing:
// build.sh installs it.
func Keystore(t testing.TB, dom int, env []string, enclaves ...string) string {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatal("interop: openssl not found (interop/build.sh installs it)")
	}
	dir := filepath.Join(t.TempDir(), "keystore")
	script := filepath.Join(sourceDir(), "sros2_keystore.sh")
	run := func(args ...string) {
		cmd := exec.Command("sh", append([]string{script}, args...)...)
		cmd.Env = append(append(os.Environ(), "ROS_DOMAIN_ID="+strconv.Itoa(dom)), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("interop: sros2_keystore.sh %v: %v\n%s", args, err, out)
		}
	}
	run("create_keystore", dir)
	for _, e := range enclaves {
		run("create_enclave", dir, e)
	}
	return dir
}

// Capture records the UDP traffic on lo (tcpdump, inside the namespace)
// until Stop.
type Capture struct {
	file string
	cmd  *exec.Cmd
}

// StartCapture starts tcpdump on lo writing to a temporary pcap file and
// waits until it listens. The test fails when tcpdump is missing: build.sh
// installs it.
func StartCapture(t testing.TB) *Capture {
	t.Helper()
	RequireNamespace(t)
	bin, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Fatal("interop: tcpdump not found (interop/build.sh installs it)")
	}
	c := &Capture{file: filepath.Join(t.TempDir(), "lo.pcap")}
	c.cmd = exec.Command(bin, "-i", "lo", "-U", "-n", "-s", "0", "-w", c.file, "udp")
	errf, err := os.Create(c.file + ".log")
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	c.cmd.Stderr = errf
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("interop: tcpdump: %v", err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); _ = c.cmd.Wait() })
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if b, _ := os.ReadFile(c.file + ".log"); strings.Contains(string(b), "listening on") {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("interop: tcpdump did not start listening")
		}
	}
}

// Datagram is one captured UDP datagram.
type Datagram struct {
	SrcPort, DstPort int
	Payload          []byte
}

// Stop ends tcpdump (SIGINT, so it flushes) and returns the raw pcap file
// and its UDP datagrams.
func (c *Capture) Stop(t testing.TB) ([]byte, []Datagram) {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
	raw, err := os.ReadFile(c.file)
	if err != nil {
		t.Fatalf("interop: capture: %v", err)
	}
	dgs, err := parsePcap(raw)
	if err != nil {
		t.Fatalf("interop: capture: %v", err)
	}
	return raw, dgs
}

// parsePcap reads a classic pcap file of Ethernet (lo) frames and returns
// its IPv4 UDP datagrams.
func parsePcap(b []byte) ([]Datagram, error) {
	if len(b) < 24 {
		return nil, errors.New("pcap shorter than its header")
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		bo = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		bo = binary.BigEndian
	default:
		return nil, fmt.Errorf("not a pcap file (magic %x)", b[:4])
	}
	if lt := bo.Uint32(b[20:]); lt != 1 {
		return nil, fmt.Errorf("pcap link type %d, want 1 (Ethernet)", lt)
	}
	var out []Datagram
	for off := 24; off+16 <= len(b); {
		n := int(bo.Uint32(b[off+8:]))
		off += 16
		if n > len(b)-off {
			break
		}
		f := b[off : off+n]
		off += n
		if len(f) < 14+20 || f[12] != 0x08 || f[13] != 0x00 {
			continue
		}
		ip := f[14:]
		ihl := int(ip[0]&0x0f) * 4
		if ip[9] != 17 || len(ip) < ihl+8 {
			continue
		}
		udp := ip[ihl:]
		ulen := int(binary.BigEndian.Uint16(udp[4:]))
		if ulen < 8 || ulen > len(udp) {
			continue
		}
		out = append(out, Datagram{SrcPort: int(binary.BigEndian.Uint16(udp)), DstPort: int(binary.BigEndian.Uint16(udp[2:])), Payload: udp[8:ulen]})
	}
	return out, nil
}
