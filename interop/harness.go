// Package interop runs real DDS programs next to Go tests: small Cyclone DDS
// (C) and Fast DDS (C++) peers that behave on the wire like ROS 2 Humble
// nodes. Their sources are in interop/src; interop/build.sh builds them and
// interop/netns runs a command in a network namespace that has only
// loopback.
//
// Every function here that starts a peer first checks that the process is
// inside such a namespace and skips the test otherwise, so nothing a test
// starts can reach a real network. Run socket-using tests as
//
//	interop/netns go test ./pkg/ -run TestX -v
//
// The peers are built on first use (Peers). When the Debian packages or the
// compilers are missing and cannot be installed, the test is skipped with
// one line that starts with "INTEROP SKIPPED:".
package interop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nros-go/nros/internal/testdomain"
)

// Vendors lists the DDS implementations that have a build of every peer,
// in the suffix form used by program names ("clockpub_" + vendor).
var Vendors = []string{"cyclone", "fastdds"}

// Exit codes shared by the peers.
const (
	ExitOK      = 0 // finished normally
	ExitUsage   = 2 // bad flags or a DDS call failed
	ExitTimeout = 3 // --timeout passed before --count samples arrived
	ExitOrder   = 4 // chattersub: all samples arrived, but not in order
)

// sourceDir is interop/ in the source tree (where build.sh lives).
func sourceDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "interop"
	}
	return filepath.Dir(file)
}

var build struct {
	once sync.Once
	dir  string
	skip string // why the peers cannot exist here
	err  error  // a real build failure
}

// Peers returns the directory that holds the built peer programs, building
// them with build.sh on first use (a no-op when they are up to date).
// $NROS_INTEROP_PEERS names a directory of prebuilt programs instead.
// When the Debian packages or compilers are missing and cannot be
// installed, it skips the test with one loud line; a compile error fails it.
func Peers(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		if dir := os.Getenv("NROS_INTEROP_PEERS"); dir != "" {
			build.dir = dir
			return
		}
		src := sourceDir()
		build.dir = filepath.Join(src, "build")
		script := filepath.Join(src, "build.sh")
		if _, err := os.Stat(script); err != nil {
			build.skip = "build.sh not found next to the interop package: " + err.Error()
			return
		}
		if _, err := exec.LookPath("sh"); err != nil {
			build.skip = "no sh to run build.sh"
			return
		}
		var out bytes.Buffer
		cmd := exec.Command("sh", script, build.dir)
		cmd.Stdout = &out
		cmd.Stderr = &out
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ee.ExitCode() == 77:
			build.skip = lastLine(out.String())
		default:
			build.err = fmt.Errorf("interop/build.sh: %v\n%s", err, out.String())
		}
	})
	if build.skip != "" {
		t.Skip("INTEROP SKIPPED: " + build.skip)
	}
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.dir
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// InNamespace reports whether this process sees loopback interfaces only,
// which is the case inside interop/netns (and never on a machine's normal
// network namespace).
func InNamespace() bool {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		return false
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			return false
		}
	}
	return true
}

// RequireNamespace skips the test, loudly, unless the process runs in a
// loopback-only namespace whose lo is up with multicast (as interop/netns
// sets it up).
func RequireNamespace(t testing.TB) {
	t.Helper()
	if !InNamespace() {
		t.Skip("INTEROP SKIPPED: not in a loopback-only network namespace; run the test as `interop/netns go test ...`")
	}
	lo, err := net.InterfaceByName("lo")
	if err != nil || lo.Flags&net.FlagUp == 0 || lo.Flags&net.FlagMulticast == 0 {
		t.Skip("INTEROP SKIPPED: lo is not up with multicast in this namespace; use interop/netns")
	}
}

// Proc is a running peer program. Its stdout is collected line by line;
// it is killed, if still running, when the test ends.
type Proc struct {
	Name string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	lines  []string
	stderr bytes.Buffer
	grew   chan struct{} // closed and replaced whenever stdout or stderr grows, or stdout ends
	eof    bool
	done   chan struct{} // closed when the process has exited
	err    error         // from cmd.Wait
}

// wake tells waiters that output changed; p.mu must be held.
func (p *Proc) wake() {
	close(p.grew)
	p.grew = make(chan struct{})
}

// Start runs the peer program name (for example "clockpub_cyclone") from
// the Peers directory with args, inside the namespace (RequireNamespace),
// with the loopback-only vendor configs in its environment.
func Start(t testing.TB, name string, args ...string) *Proc {
	t.Helper()
	return StartEnv(t, nil, name, args...)
}

// StartEnv is Start with env ("K=V" entries) added to the peer's
// environment (e.g. ROS_SECURITY_*).
func StartEnv(t testing.TB, env []string, name string, args ...string) *Proc {
	t.Helper()
	RequireNamespace(t)
	dir := Peers(t)
	p := &Proc{Name: name, grew: make(chan struct{}), done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(dir, name), args...)
	p.cmd.Env = append(peerEnv(), env...)
	p.cmd.Stderr = stderrWriter{p}
	p.cmd.SysProcAttr = groupAttr()
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("interop: %s: %v", name, err)
	}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatalf("interop: %s: %v", name, err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("interop: start %s: %v", name, err)
	}
	collected := make(chan struct{})
	go p.collect(out, collected)
	go func() {
		<-collected // Wait closes the pipe: read everything first
		err := p.cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Kill()
		if t.Failed() {
			t.Logf("interop: %s %s\n  stdout (%d lines, last 5): %q\n  stderr: %s", name, strings.Join(args, " "),
				len(p.Lines()), tail(p.Lines(), 5), strings.TrimSpace(p.Stderr()))
		}
	})
	return p
}

func tail(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// peerEnv is the test's environment plus the loopback-only configs of
// interop/config, unless the caller already set them.
func peerEnv() []string {
	env := os.Environ()
	cfg := filepath.Join(sourceDir(), "config")
	if os.Getenv("CYCLONEDDS_URI") == "" {
		env = append(env, "CYCLONEDDS_URI=file://"+filepath.Join(cfg, "cyclonedds-lo.xml"))
	}
	if os.Getenv("FASTRTPS_DEFAULT_PROFILES_FILE") == "" {
		env = append(env, "FASTRTPS_DEFAULT_PROFILES_FILE="+filepath.Join(cfg, "fastdds-lo.xml"))
	}
	return env
}

type stderrWriter struct{ p *Proc }

func (w stderrWriter) Write(b []byte) (int, error) {
	w.p.mu.Lock()
	defer w.p.mu.Unlock()
	w.p.wake()
	return w.p.stderr.Write(b)
}

func (p *Proc) collect(r io.Reader, collected chan<- struct{}) {
	defer close(collected)
	br := bufio.NewReaderSize(r, 64*1024)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			p.mu.Lock()
			p.lines = append(p.lines, strings.TrimRight(line, "\r\n"))
			p.wake()
			p.mu.Unlock()
		}
		if err != nil {
			p.mu.Lock()
			p.eof = true
			p.wake()
			p.mu.Unlock()
			return
		}
	}
}

// Lines returns a copy of the stdout lines printed so far.
func (p *Proc) Lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// Stderr returns what the program wrote to stderr so far.
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

// WaitLines waits until the program has printed at least n stdout lines
// and returns them all; it fails with an error on timeout or if stdout
// ends first.
func (p *Proc) WaitLines(n int, timeout time.Duration) ([]string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		got, eof, grew := len(p.lines), p.eof, p.grew
		p.mu.Unlock()
		if got >= n {
			return p.Lines(), nil
		}
		if eof {
			return p.Lines(), fmt.Errorf("%s: output ended after %d of %d lines", p.Name, got, n)
		}
		select {
		case <-grew:
		case <-timer.C:
			return p.Lines(), fmt.Errorf("%s: %d of %d lines after %v", p.Name, got, n, timeout)
		}
	}
}

// WaitStderr waits until the program's stderr contains substr (for
// example "(2 so far)": subscribers print "matched N publisher(s) (T so
// far)" whenever their match counts change). It fails on timeout or when
// the program has exited without printing it.
func (p *Proc) WaitStderr(substr string, timeout time.Duration) error {
	return p.WaitStderrMatch(regexp.MustCompile(regexp.QuoteMeta(substr)), timeout)
}

// WaitStderrMatch is WaitStderr for a regular expression.
func (p *Proc) WaitStderrMatch(re *regexp.Regexp, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		found, grew := re.MatchString(p.stderr.String()), p.grew
		p.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-grew:
		case <-p.done:
			if re.MatchString(p.Stderr()) {
				return nil
			}
			return fmt.Errorf("%s exited without printing /%s/ on stderr", p.Name, re)
		case <-timer.C:
			return fmt.Errorf("%s: no /%s/ on stderr after %v", p.Name, re, timeout)
		}
	}
}

// Send writes line and a newline to the program's stdin (publishers
// started with --gate start publishing on the first line).
func (p *Proc) Send(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// Wait waits up to timeout for the program to exit and returns its exit
// code. On timeout it kills the program and returns an error.
func (p *Proc) Wait(timeout time.Duration) (int, error) {
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.Kill()
		return -1, fmt.Errorf("%s: still running after %v, killed", p.Name, timeout)
	}
	p.mu.Lock()
	err := p.err
	p.mu.Unlock()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode(), nil
	default:
		return -1, fmt.Errorf("%s: %v", p.Name, err)
	}
}

// Kill stops the program (SIGKILL to its process group) and waits for it.
func (p *Proc) Kill() {
	select {
	case <-p.done:
		return
	default:
	}
	killGroup(p.cmd)
	<-p.done
}

// Domain returns a DDS domain id (1..232) that no other test process on
// this machine holds, so parallel tests do not see each other's topics. It
// is held through a lock file in the temp directory until the test ends.
func Domain(t testing.TB) int {
	t.Helper()
	return testdomain.Acquire(t)
}

// DomainPorts returns the UDP port range that RTPS uses for a domain
// (7400 + 250*domain, 250 ports: multicast discovery and user traffic,
// and unicast ports of participants with a participant index).
func DomainPorts(domain int) (first, last int) {
	first = 7400 + 250*domain
	return first, first + 249
}

// UDPLoss drops percent % of the UDP datagrams whose destination port is
// in the domain's range (DomainPorts), at random, until the test ends. It
// needs nft and the namespace. Cyclone peers by default receive unicast on
// ephemeral ports that this does not cover: start them with
// --fixed-ports so that their traffic is in range as well.
func UDPLoss(t testing.TB, domain, percent int) {
	t.Helper()
	RequireNamespace(t)
	if percent < 0 || percent > 100 {
		t.Fatalf("interop: UDPLoss percent %d out of 0..100", percent)
	}
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("INTEROP SKIPPED: UDPLoss needs nft (Debian package nftables)")
	}
	table := fmt.Sprintf("nros_loss_d%d", domain)
	first, last := DomainPorts(domain)
	rules := fmt.Sprintf("table inet %s {\n chain input {\n  type filter hook input priority 0; policy accept;\n"+
		"  udp dport %d-%d numgen random mod 100 < %d drop\n }\n}\n", table, first, last, percent)
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("interop: nft: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("nft", "delete", "table", "inet", table).CombinedOutput(); err != nil {
			t.Errorf("interop: removing %s: %v: %s", table, err, out)
		}
	})
}

var (
	matchedSubs = regexp.MustCompile(`matched [1-9][0-9]* subscriber`)
	matchedPubs = regexp.MustCompile(`matched [1-9][0-9]* publisher`)
)

// Release lets a publisher started with "--wait-subs N --gate" go once
// discovery is complete on both sides: the publisher has printed that it
// matched its subscribers and every sub has printed "matched" for its
// reader. Writer-side matching alone is not enough: a VOLATILE reader
// that matches the writer late never gets what was written before.
func Release(t testing.TB, timeout time.Duration, pub *Proc, subs ...*Proc) {
	t.Helper()
	if err := pub.WaitStderrMatch(matchedSubs, timeout); err != nil {
		t.Fatalf("interop: %v", err)
	}
	for _, s := range subs {
		if err := s.WaitStderrMatch(matchedPubs, timeout); err != nil {
			t.Fatalf("interop: %v", err)
		}
	}
	if err := pub.Send("go"); err != nil {
		t.Fatalf("interop: releasing %s: %v", pub.Name, err)
	}
}
