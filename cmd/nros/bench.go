package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/internal/rosargs"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/nros_bench"
	"github.com/nros-go/nros/rmw"
)

// The ping-pong protocol of the interop ping-pong peers (interop/src):
// samples with stamp_ns < 0 are control samples, everything else pong
// echoes unchanged.
const (
	ppSink   = -2 // ping -> pong: reset counters, count instead of echoing; pong answers -2
	ppReport = -1 // ping -> pong: report; pong answers -1 with 32 bytes (rx, bytes, first, last; LE int64)
	ppQuit   = -9 // ping -> pong: quit
)

const benchUsage = `usage: nros bench pingpong ping|pong [flags]

Round-trip latency and throughput against another nros, Cyclone DDS or
Fast DDS pingpong peer on /ping and /pong (nros_bench/msg/Payload).
`

const payloadType = "nros_bench/msg/Payload"

// pingpongOpts are the flags of `nros bench pingpong`, named and defaulted
// as the reference peers' flags.
type pingpongOpts struct {
	role                           string
	size, count, warmup, depth     int
	timeoutMs                      int
	bestEffort, reliable, keepPong bool
	mode                           string
	duration, waitTimeout          float64
	node                           string
	// settle is the pause after matching so that the far side has matched
	// too; quitGap spaces the three quit samples.
	settle, quitGap time.Duration
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return newEnv(stdout, stderr).benchCmd(ctx, args, 300*time.Millisecond)
}

// benchCmd is `nros bench`; settle is the pause between matching and the
// first measured sample (300 ms, as the reference peers).
func (e *cliEnv) benchCmd(ctx context.Context, args []string, settle time.Duration) int {
	if len(args) == 0 || args[0] != "pingpong" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(e.stdout, benchUsage)
			return 0
		}
		fmt.Fprint(e.stderr, benchUsage)
		return 2
	}
	const prog = "nros bench pingpong"
	return exitCode(e.stderr, prog, e.pingpong(ctx, prog, args[1:], settle))
}

// monoBase anchors mono: the peers' stamps and report instants are
// monotonic nanoseconds, and only their differences matter.
var monoBase = time.Now()

// mono returns monotonic nanoseconds, always positive (a stamp of 0 or
// less would read as a control sample).
func mono() int64 { return int64(time.Since(monoBase)) + 1 }

func (e *cliEnv) pingpong(ctx context.Context, prog string, args []string, settle time.Duration) error {
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	o := pingpongOpts{settle: settle, quitGap: 20 * time.Millisecond}
	fs := newFlagSet(prog, "")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchUsage+"\nflags:\n")
		fs.PrintDefaults()
	}
	fs.IntVar(&o.size, "size", 64, "length of the data sequence in bytes")
	fs.IntVar(&o.count, "count", 10000, "measured round trips")
	fs.IntVar(&o.warmup, "warmup", 100, "unmeasured round trips first")
	fs.BoolVar(&o.bestEffort, "best-effort", false, "BEST_EFFORT (default RELIABLE)")
	fs.BoolVar(&o.reliable, "reliable", false, "RELIABLE (the default)")
	fs.IntVar(&o.depth, "depth", 10, "KEEP_LAST depth, 0 = KEEP_ALL")
	fs.StringVar(&o.mode, "mode", "latency", "latency | throughput")
	fs.Float64Var(&o.duration, "duration", 5, "throughput: flood seconds")
	fs.IntVar(&o.timeoutMs, "timeout-ms", 1000, "latency: give up on one round trip after MS")
	fs.Float64Var(&o.waitTimeout, "wait-timeout", 30, "seconds to wait for the other side")
	fs.BoolVar(&o.keepPong, "keep-pong", false, "do not tell pong to quit at the end")
	fs.StringVar(&o.node, "node", "", "node name (default nros_bench_ping or nros_bench_pong)")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	switch {
	case len(pos) == 0:
		return usagef("want ping or pong, got nothing")
	case pos[0] != "ping" && pos[0] != "pong":
		return usagef("want ping or pong, got %q", pos[0])
	case len(pos) > 1:
		return usagef("unexpected argument %q after %s", pos[1], pos[0])
	case o.mode != "latency" && o.mode != "throughput":
		return usagef("--mode %q: want latency or throughput", o.mode)
	case o.size < 0 || o.size > 256<<20:
		return usagef("--size %d: want 0 to %d bytes", o.size, 256<<20)
	case o.count < 0:
		return usagef("--count %d: want 0 or more", o.count)
	case o.warmup < 0:
		return usagef("--warmup %d: want 0 or more", o.warmup)
	case o.depth < 0:
		return usagef("--depth %d: want 0 (KEEP_ALL) or more", o.depth)
	case o.bestEffort && o.reliable:
		return usagef("--best-effort and --reliable together: give one")
	case o.timeoutMs <= 0:
		return usagef("--timeout-ms %d: want a positive number of milliseconds", o.timeoutMs)
	case !(o.duration >= 0):
		return usagef("--duration %v: want 0 or more seconds", o.duration)
	case !(o.waitTimeout >= 0):
		return usagef("--wait-timeout %v: want 0 or more seconds", o.waitTimeout)
	}
	o.role = pos[0]
	if o.node == "" {
		o.node = "nros_bench_" + o.role
	}
	qos := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: o.depth}
	if o.bestEffort {
		qos.Reliability = rmw.BestEffort
	}
	if o.depth == 0 {
		qos.History, qos.Depth = rmw.KeepAll, 0
	}
	node, err := nros.NewNode(o.node, nros.WithContext(c))
	if err != nil {
		if rosargs.ValidateNodeName(o.node) != nil {
			return usagef("--node %q: %s", o.node, cleanMessage(err))
		}
		return nodeError(err)
	}
	defer node.Close()
	out, in := "/ping", "/pong"
	if o.role == "pong" {
		out, in = in, out
	}
	if out, err = node.ResolveTopicName(out); err != nil {
		return err
	}
	if in, err = node.ResolveTopicName(in); err != nil {
		return err
	}
	info := rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}
	tr := c.Transport()
	pub, err := tr.NewPublisher(info, out, payloadType, qos, rmw.EndpointOptions{})
	if err != nil {
		return err
	}
	defer pub.Close()
	if o.role == "pong" {
		p := newPonger(pub, e.stderr, prog)
		sub, err := tr.NewSubscription(info, in, payloadType, qos, p.deliver, rmw.EndpointOptions{})
		if err != nil {
			return err
		}
		defer sub.Close()
		return p.run(ctx)
	}
	r := &pingReceiver{ch: make(chan pingItem, 256)}
	sub, err := tr.NewSubscription(info, in, payloadType, qos, r.deliver, rmw.EndpointOptions{})
	if err != nil {
		return err
	}
	defer sub.Close()
	label := "go reliable"
	if o.bestEffort {
		label = "go best-effort"
	}
	pg := &pinger{o: o, pub: pub, rx: r, out: e.stdout, stderr: e.stderr, prog: prog, label: label, timer: time.NewTimer(time.Hour)}
	defer pg.timer.Stop()
	matched := func() int { return min(pub.MatchedSubscriptions(), sub.MatchedPublishers()) }
	if !waitMatched(ctx, e.clock, 1, time.Duration(o.waitTimeout*1e9), matched) {
		if ctx.Err() != nil {
			return nil
		}
		return fatalError{fmt.Sprintf("no pong matched within %.1f s", o.waitTimeout)}
	}
	if e.clock.SleepUntil(ctx, e.clock.Now().Add(o.settle)) != nil {
		return nil
	}
	err = pg.run(ctx)
	if !o.keepPong {
		for q := 0; q < 3; q++ {
			pg.control(ppQuit, nil)
			if e.clock.SleepUntil(context.Background(), e.clock.Now().Add(o.quitGap)) != nil {
				break
			}
		}
	}
	return err
}

// pingItem is what ping's receiver passes on: a sample's stamp and, for a
// report, the first 32 bytes of its data.
type pingItem struct {
	stamp int64
	rep   [32]byte
}

// pingReceiver decodes the samples that come back to ping on the
// transport's goroutine, without allocating.
type pingReceiver struct {
	mu  sync.Mutex
	dec cdr.Decoder
	ch  chan pingItem
}

func (r *pingReceiver) deliver(s rmw.Sample) {
	var it pingItem
	r.mu.Lock()
	if r.dec.Reset(s.Data) != nil {
		r.mu.Unlock()
		return
	}
	it.stamp = r.dec.ReadInt64()
	if it.stamp < 0 {
		n := r.dec.ReadSequenceLen(1)
		r.dec.ReadOctetArray(it.rep[:min(n, len(it.rep))])
	}
	bad := r.dec.Err() != nil
	r.mu.Unlock()
	if bad {
		return
	}
	select {
	case r.ch <- it:
	default: // ping is not waiting for this many; the next await skips stale items anyway
	}
}

// pinger is the ping side: it owns one serialized sample whose stamp it
// patches in place, so the hot path neither encodes nor allocates.
type pinger struct {
	o     pingpongOpts
	pub   rmw.Publisher
	rx    *pingReceiver
	out   io.Writer
	label string
	// stderr and prog are for diagnostics.
	stderr io.Writer
	prog   string
	timer  *time.Timer
	buf    []byte // serialized Payload of o.size zero bytes
	ctl    []byte // scratch for control samples
	ctx    context.Context
}

// stampAt is where stamp_ns sits in a serialized Payload: right after the
// encapsulation header, 8-aligned at body offset 0.
const stampAt = cdr.HeaderSize

func (p *pinger) send(stamp int64) error {
	binary.LittleEndian.PutUint64(p.buf[stampAt:], uint64(stamp))
	return p.pub.Publish(p.buf)
}

func (p *pinger) control(code int64, data []byte) {
	p.ctl = msg.Marshal(&nros_bench.Payload{StampNs: code, Data: data}, true, p.ctl[:0])
	_ = p.pub.Publish(p.ctl)
}

// await waits up to timeout for a sample stamped want, skipping others.
func (p *pinger) await(want int64, timeout time.Duration) (pingItem, bool) {
	p.timer.Reset(timeout)
	defer p.timer.Stop()
	for {
		select {
		case it := <-p.rx.ch:
			if it.stamp == want {
				return it, true
			}
		case <-p.timer.C:
			return pingItem{}, false
		case <-p.ctx.Done():
			return pingItem{}, false
		}
	}
}

func (p *pinger) run(ctx context.Context) error {
	p.ctx = ctx
	p.buf = msg.Marshal(&nros_bench.Payload{Data: make([]byte, p.o.size)}, true, nil)
	if p.o.mode == "latency" {
		return p.latency()
	}
	return p.throughput()
}

func (p *pinger) latency() error {
	rtt := make([]int64, 0, p.o.count)
	lost := 0
	timeout := time.Duration(p.o.timeoutMs) * time.Millisecond
	for i := 0; i < p.o.warmup+p.o.count && p.ctx.Err() == nil; i++ {
		t0 := mono()
		if err := p.send(t0); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		if _, ok := p.await(t0, timeout); !ok {
			if i >= p.o.warmup && p.ctx.Err() == nil {
				lost++
			}
			continue
		}
		if i >= p.o.warmup {
			rtt = append(rtt, mono()-t0)
		}
	}
	_, err := io.WriteString(p.out, latencyLine(p.label, rtt, lost, p.o.size))
	return err
}

func (p *pinger) throughput() error {
	tries := 0
	for ; tries < 25; tries++ {
		p.control(ppSink, nil)
		if _, ok := p.await(ppSink, 200*time.Millisecond); ok {
			break
		}
		if p.ctx.Err() != nil {
			return nil
		}
	}
	if tries == 25 {
		return fatalError{"pong did not acknowledge the throughput start"}
	}
	// A write the transport refuses (a KEEP_ALL history full past its
	// blocking time) is not sent, as the Fast DDS peer counts it.
	sent, failed := int64(0), int64(0)
	var lastErr error
	t0 := mono()
	end := t0 + int64(p.o.duration*1e9+0.5)
	t1 := t0
	for ; t1 < end && p.ctx.Err() == nil; t1 = mono() {
		for j := 0; j < 64; j++ {
			if err := p.send(sent); err != nil {
				failed++
				lastErr = err
				continue
			}
			sent++
		}
	}
	dt := float64(t1-t0) / 1e9
	if failed > 0 {
		fmt.Fprintf(p.stderr, "%s: %d writes failed (%v)\n", p.prog, failed, lastErr)
		if sent == 0 {
			return fmt.Errorf("publish: %w", lastErr)
		}
	}
	for tries = 0; tries < 100; tries++ {
		p.control(ppReport, nil)
		if it, ok := p.await(ppReport, 300*time.Millisecond); ok {
			_, err := io.WriteString(p.out, throughputLine(p.label, p.o.size, p.o.depth, dt, sent, it.rep))
			return err
		}
		if p.ctx.Err() != nil {
			return nil
		}
	}
	return fmt.Errorf("no report from pong")
}

// nearestRank is the nearest-rank percentile p (0..100] of sorted v.
func nearestRank(v []int64, p float64) int64 {
	x := p / 100 * float64(len(v))
	k := int(x)
	if float64(k) < x {
		k++
	}
	k = max(1, min(k, len(v)))
	return v[k-1]
}

// latencyLine formats the reference peers' latency result:
// "<vendor> <qos> size=B samples=N lost=L rtt_us min= mean= p50= p90= p99= max=".
// It sorts rtt (ns).
func latencyLine(label string, rtt []int64, lost, size int) string {
	if len(rtt) == 0 {
		return fmt.Sprintf("%s size=%d samples=0 lost=%d\n", label, size, lost)
	}
	slices.Sort(rtt)
	sum := 0.0
	for _, v := range rtt {
		sum += float64(v)
	}
	us := func(v int64) float64 { return float64(v) / 1e3 }
	return fmt.Sprintf("%s size=%d samples=%d lost=%d rtt_us min=%.1f mean=%.1f p50=%.1f p90=%.1f p99=%.1f max=%.1f\n",
		label, size, len(rtt), lost, us(rtt[0]), sum/float64(len(rtt))/1e3, us(nearestRank(rtt, 50)),
		us(nearestRank(rtt, 90)), us(nearestRank(rtt, 99)), us(rtt[len(rtt)-1]))
}

// throughputLine formats the reference peers' throughput result from pong's
// 32-byte report (received, bytes, first and last receive instants).
func throughputLine(label string, size, depth int, dt float64, sent int64, rep [32]byte) string {
	rx := int64(binary.LittleEndian.Uint64(rep[0:]))
	bytes := int64(binary.LittleEndian.Uint64(rep[8:]))
	first := int64(binary.LittleEndian.Uint64(rep[16:]))
	last := int64(binary.LittleEndian.Uint64(rep[24:]))
	rdt := dt
	if last > first {
		rdt = float64(last-first) / 1e9
	}
	return fmt.Sprintf("%s throughput size=%d depth=%d duration_s=%.2f sent=%d sent_msgs_per_s=%.0f received=%d "+
		"lost=%d recv_msgs_per_s=%.0f recv_MB_per_s=%.2f recv_Mbit_per_s=%.1f\n",
		label, size, depth, dt, sent, float64(sent)/dt, rx, sent-rx, float64(rx)/rdt,
		float64(bytes)/rdt/1e6, float64(bytes)*8/rdt/1e6)
}

// ponger is the pong side. The transport's goroutine decodes each sample
// and either counts it (sink mode), echoes it at once from deliver, or (for
// control answers, and echoes behind them) queues the bytes for the run
// goroutine to publish in order.
type ponger struct {
	pub    rmw.Publisher
	stderr io.Writer
	prog   string
	wake   chan struct{}

	mu                     sync.Mutex
	dec                    cdr.Decoder
	sink, quit             bool
	rx, bytes, first, last int64
	queue, spare           []pongItem
	free                   [][]byte
	overflow               int
}

type pongItem struct {
	data []byte
	note string // a line for stderr once data is sent
}

// maxPongQueue bounds the echoes waiting to be sent; older ones are
// dropped beyond it (a flood without a sink request).
const maxPongQueue = 4096

// maxPongFree bounds the spare buffers pong keeps for reuse.
const maxPongFree = 64

func newPonger(pub rmw.Publisher, stderr io.Writer, prog string) *ponger {
	return &ponger{pub: pub, stderr: stderr, prog: prog, wake: make(chan struct{}, 1)}
}

// buffer returns a spare buffer holding a copy of b (p.mu held).
func (p *ponger) buffer(b []byte) []byte {
	var buf []byte
	if n := len(p.free); n > 0 {
		buf, p.free = p.free[n-1][:0], p.free[:n-1]
	}
	return append(buf, b...)
}

func (p *ponger) enqueue(it pongItem) {
	if len(p.queue) >= maxPongQueue {
		if len(p.free) < maxPongFree {
			p.free = append(p.free, p.queue[0].data)
		}
		p.queue = append(p.queue[:0], p.queue[1:]...)
		p.overflow++
	}
	p.queue = append(p.queue, it)
}

func (p *ponger) deliver(s rmw.Sample) {
	p.mu.Lock()
	if p.dec.Reset(s.Data) != nil {
		p.mu.Unlock()
		return
	}
	stamp := p.dec.ReadInt64()
	n := p.dec.ReadSequenceLen(1)
	if p.dec.Err() != nil {
		p.mu.Unlock()
		return
	}
	switch {
	case stamp >= 0 && p.sink:
		t := mono()
		if p.rx == 0 {
			p.first = t
		}
		p.last = t
		p.rx++
		p.bytes += int64(n)
	case stamp >= 0 && len(p.queue) == 0:
		// The echo goes back from deliver itself (both transports allow
		// publishing from deliver): no goroutine hand-off on the latency
		// path. Queued control answers keep their order: then it queues.
		p.mu.Unlock()
		if err := p.pub.Publish(s.Data); err != nil {
			fmt.Fprintf(p.stderr, "%s: publish: %v\n", p.prog, err)
		}
		return
	case stamp >= 0:
		p.enqueue(pongItem{data: p.buffer(s.Data)})
	case stamp == ppSink:
		p.sink, p.rx, p.bytes, p.first, p.last = true, 0, 0, 0, 0
		p.enqueue(pongItem{data: msg.Marshal(&nros_bench.Payload{StampNs: ppSink}, true, p.buffer(nil))})
	case stamp == ppReport:
		var rep [32]byte
		binary.LittleEndian.PutUint64(rep[0:], uint64(p.rx))
		binary.LittleEndian.PutUint64(rep[8:], uint64(p.bytes))
		binary.LittleEndian.PutUint64(rep[16:], uint64(p.first))
		binary.LittleEndian.PutUint64(rep[24:], uint64(p.last))
		it := pongItem{data: msg.Marshal(&nros_bench.Payload{StampNs: ppReport, Data: rep[:]}, true, p.buffer(nil))}
		if p.sink {
			it.note = fmt.Sprintf("%s: sink counted %d samples, %d bytes\n", p.prog, p.rx, p.bytes)
		}
		p.sink = false
		p.enqueue(it)
	case stamp == ppQuit:
		p.quit = true
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run sends the queued samples until a quit sample arrives or ctx ends.
func (p *ponger) run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-p.wake:
		}
		p.mu.Lock()
		batch := p.queue
		p.queue, p.spare = p.spare[:0], nil
		quit, overflow := p.quit, p.overflow
		p.overflow = 0
		p.mu.Unlock()
		for _, it := range batch {
			if err := p.pub.Publish(it.data); err != nil {
				fmt.Fprintf(p.stderr, "%s: publish: %v\n", p.prog, err)
			}
			if it.note != "" {
				io.WriteString(p.stderr, it.note)
			}
		}
		if overflow > 0 {
			fmt.Fprintf(p.stderr, "%s: %d echoes dropped (queue full)\n", p.prog, overflow)
		}
		p.mu.Lock()
		for i := range batch {
			if len(p.free) < maxPongFree {
				p.free = append(p.free, batch[i].data)
			}
			batch[i] = pongItem{}
		}
		p.spare = batch[:0]
		p.mu.Unlock()
		if quit {
			return nil
		}
	}
}
