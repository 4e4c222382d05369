package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/nros_bench"
	"github.com/nros-go/nros/rmw"
	"github.com/nros-go/nros/rmw/intra"
)

var (
	latencyRE    = regexp.MustCompile(`^go (reliable|best-effort) size=(\d+) samples=(\d+) lost=(\d+) rtt_us min=(\d+\.\d) mean=(\d+\.\d) p50=(\d+\.\d) p90=(\d+\.\d) p99=(\d+\.\d) max=(\d+\.\d)\n$`)
	throughputRE = regexp.MustCompile(`^go (reliable|best-effort) throughput size=(\d+) depth=(\d+) duration_s=(\d+\.\d\d) sent=(\d+) sent_msgs_per_s=(\d+) received=(\d+) lost=(-?\d+) recv_msgs_per_s=(\d+) recv_MB_per_s=(\d+\.\d\d) recv_Mbit_per_s=(\d+\.\d)\n$`)
)

// pingpong runs pong and ping in one process, two contexts on one
// in-process transport, and returns ping's stdout and pong's stderr.
func pingpong(t *testing.T, pingArgs, pongArgs []string) (string, string) {
	t.Helper()
	tr := intra.New()
	defer tr.Close()
	ctx := context.Background()
	pong, _, pongErr := testEnv(tr, realClock{})
	pongDone := runAsync(func() int { return pong.benchCmd(ctx, append([]string{"pingpong", "pong"}, pongArgs...), 0) })
	ping, pingOut, pingErr := testEnv(tr, realClock{})
	if code := ping.benchCmd(ctx, append([]string{"pingpong", "ping"}, pingArgs...), 0); code != 0 {
		t.Fatalf("ping: exit %d: %s", code, pingErr)
	}
	waitCode(t, pongDone, "pong (told to quit)", pongErr)
	return pingOut.String(), pongErr.String()
}

func TestPingPongLatency(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		label string
		size  int
	}{
		{[]string{"--count", "300", "--warmup", "20"}, "go reliable", 64},
		{[]string{"--count", "200", "--warmup", "10", "--best-effort", "--size", "65536"}, "go best-effort", 65536},
		{[]string{"--count", "50", "--warmup", "0", "--reliable", "--depth", "0", "--size", "0", "--ros-args", "--log-level", "warn"}, "go reliable", 0},
	} {
		out, _ := pingpong(t, tc.args, tc.args)
		m := latencyRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%v: malformed line %q", tc.args, out)
		}
		if !strings.HasPrefix(out, tc.label+" ") || m[2] != strconv.Itoa(tc.size) || m[4] != "0" {
			t.Fatalf("%v: %q", tc.args, out)
		}
		count := tc.args[1]
		if m[3] != count {
			t.Fatalf("%v: samples=%s, want %s", tc.args, m[3], count)
		}
		var v []float64
		for _, s := range m[5:] {
			f, _ := strconv.ParseFloat(s, 64)
			v = append(v, f)
		}
		// min <= p50 <= p90 <= p99 <= max and min <= mean <= max
		if !(v[0] <= v[2] && v[2] <= v[3] && v[3] <= v[4] && v[4] <= v[5] && v[0] <= v[1] && v[1] <= v[5]) {
			t.Fatalf("%v: inconsistent statistics %q", tc.args, out)
		}
		t.Logf("%s", strings.TrimSpace(out))
	}
}

func TestPingPongThroughput(t *testing.T) {
	for _, args := range [][]string{
		{"--mode", "throughput", "--duration", "0.2"},
		{"--mode", "throughput", "--duration", "0.2", "--size", "65536", "--best-effort", "--depth", "0"},
	} {
		out, pongErr := pingpong(t, args, args)
		m := throughputRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%v: malformed line %q", args, out)
		}
		if m[5] != m[7] || m[8] != "0" || m[5] == "0" {
			t.Fatalf("%v: sent %s, received %s, lost %s", args, m[5], m[7], m[8])
		}
		if !strings.Contains(pongErr, "sink counted "+m[7]+" samples") {
			t.Fatalf("pong's stderr %q", pongErr)
		}
		t.Logf("%s", strings.TrimSpace(out))
	}
}

func TestPingWithoutPong(t *testing.T) {
	tr := intra.New()
	defer tr.Close()
	e, out, errb := testEnv(tr, newFakeClock())
	if code := e.benchCmd(context.Background(), []string{"pingpong", "ping", "--wait-timeout", "0.5"}, 0); code != 1 {
		t.Fatalf("exit %d, want 1 (a runtime failure)", code)
	}
	if out.Len() != 0 || !strings.Contains(errb.String(), "no pong matched within 0.5 s") {
		t.Fatalf("stdout %q, stderr %q", out, errb)
	}
}

func TestResultLines(t *testing.T) {
	if got, want := latencyLine("go reliable", []int64{3000, 1000, 2000}, 1, 64),
		"go reliable size=64 samples=3 lost=1 rtt_us min=1.0 mean=2.0 p50=2.0 p90=3.0 p99=3.0 max=3.0\n"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got, want := latencyLine("go best-effort", nil, 5, 8), "go best-effort size=8 samples=0 lost=5\n"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	var v []int64
	for i := int64(1); i <= 200; i++ {
		v = append(v, i*1000+50)
	}
	for p, want := range map[float64]int64{50: 100050, 90: 180050, 99: 198050, 100: 200050, 0.1: 1050} {
		if got := nearestRank(v, p); got != want {
			t.Errorf("p%v = %d, want %d", p, got, want)
		}
	}
	var rep [32]byte
	binary.LittleEndian.PutUint64(rep[0:], 900)
	binary.LittleEndian.PutUint64(rep[8:], 900*64)
	binary.LittleEndian.PutUint64(rep[16:], 1e9)
	binary.LittleEndian.PutUint64(rep[24:], 1.5e9)
	want := "go reliable throughput size=64 depth=10 duration_s=0.50 sent=1000 sent_msgs_per_s=2000 received=900 " +
		"lost=100 recv_msgs_per_s=1800 recv_MB_per_s=0.12 recv_Mbit_per_s=0.9\n"
	if got := throughputLine("go reliable", 64, 10, 0.5, 1000, rep); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

type capturePub struct{ sent [][]byte }

func (c *capturePub) Publish(b []byte) error {
	c.sent = append(c.sent, append([]byte(nil), b...))
	return nil
}
func (c *capturePub) MatchedSubscriptions() int { return 1 }
func (c *capturePub) Close() error              { return nil }

var _ rmw.Publisher = (*capturePub)(nil)

// Pong speaks the control protocol of the reference peers and echoes data
// samples byte for byte.
func TestPongProtocol(t *testing.T) {
	cp := &capturePub{}
	var errb bytes.Buffer
	p := newPonger(cp, &errb, "pong")
	sample := func(stamp int64, n int, bigEndian bool) []byte {
		return msg.Marshal(&nros_bench.Payload{StampNs: stamp, Data: bytes.Repeat([]byte{7}, n)}, !bigEndian, nil)
	}
	echo := sample(42, 10, true)
	for _, s := range [][]byte{echo, {0, 1}, nil, sample(ppSink, 0, false), sample(1, 100, false), sample(2, 28, false), sample(ppReport, 0, false), sample(ppQuit, 0, false)} {
		p.deliver(rmw.Sample{Data: s})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := p.run(ctx); err != nil || ctx.Err() != nil {
		t.Fatalf("run: %v (ctx %v)", err, ctx.Err())
	}
	if len(cp.sent) != 3 || !bytes.Equal(cp.sent[0], echo) {
		t.Fatalf("sent %d samples: %x", len(cp.sent), cp.sent)
	}
	var ack, rep nros_bench.Payload
	if msg.Unmarshal(cp.sent[1], &ack) != nil || ack.StampNs != ppSink || len(ack.Data) != 0 {
		t.Fatalf("sink ack %+v", ack)
	}
	if msg.Unmarshal(cp.sent[2], &rep) != nil || rep.StampNs != ppReport || len(rep.Data) != 32 {
		t.Fatalf("report %+v", rep)
	}
	rx, nbytes := binary.LittleEndian.Uint64(rep.Data), binary.LittleEndian.Uint64(rep.Data[8:])
	first, last := int64(binary.LittleEndian.Uint64(rep.Data[16:])), int64(binary.LittleEndian.Uint64(rep.Data[24:]))
	if rx != 2 || nbytes != 128 || first <= 0 || last < first {
		t.Fatalf("report rx=%d bytes=%d first=%d last=%d", rx, nbytes, first, last)
	}
	if !strings.Contains(errb.String(), "sink counted 2 samples, 128 bytes") {
		t.Fatalf("stderr %q", errb.String())
	}
}

// The hot path of ping's receiver and of pong's echo does not allocate.
func TestPingPongHotPathAllocs(t *testing.T) {
	r := &pingReceiver{ch: make(chan pingItem, 1)}
	s := rmw.Sample{Data: msg.Marshal(&nros_bench.Payload{StampNs: 5, Data: make([]byte, 1024)}, true, nil)}
	if n := testing.AllocsPerRun(100, func() { r.deliver(s); <-r.ch }); n != 0 {
		t.Errorf("ping receive: %v allocs", n)
	}
	// Pong echoes from deliver itself: no queue, no wake, no allocation.
	cp := &countPub{}
	p := newPonger(cp, &bytes.Buffer{}, "pong")
	if n := testing.AllocsPerRun(100, func() { p.deliver(s) }); n != 0 {
		t.Errorf("pong echo: %v allocs", n)
	}
	if cp.n != 101 || len(p.wake) != 0 {
		t.Errorf("pong echoed %d of 101 samples from deliver (wake pending: %d)", cp.n, len(p.wake))
	}
}

type countPub struct{ n int }

func (c *countPub) Publish([]byte) error      { c.n++; return nil }
func (c *countPub) MatchedSubscriptions() int { return 1 }
func (c *countPub) Close() error              { return nil }

type discardPub struct{}

func (discardPub) Publish([]byte) error      { return nil }
func (discardPub) MatchedSubscriptions() int { return 1 }
func (discardPub) Close() error              { return nil }

func FuzzPongDeliver(f *testing.F) {
	f.Add(msg.Marshal(&nros_bench.Payload{StampNs: 1, Data: []byte{1, 2, 3}}, true, nil))
	f.Add(msg.Marshal(&nros_bench.Payload{StampNs: ppReport}, false, nil))
	f.Add([]byte{0, 1, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := newPonger(discardPub{}, &bytes.Buffer{}, "pong")
		r := &pingReceiver{ch: make(chan pingItem, 1)}
		p.deliver(rmw.Sample{Data: data}) // must not panic
		r.deliver(rmw.Sample{Data: data})
	})
}
