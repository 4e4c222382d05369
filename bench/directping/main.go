// Command directping is the ping side of the reference peers' pingpong
// latency test (topics /ping and /pong, nros_bench/msg/Payload) driven
// from the transport's deliver function: the echo of one ping is timed and
// the next ping published on the receive goroutine, with no hand-off to
// another goroutine. With bench/echopong as pong it shows the round trip
// of the rtps transport itself; scripts/bench.sh runs it next to
// `nros bench pingpong ping`. The result line is the peers' latency line
// with vendor "go-direct":
//
//	go-direct <reliable|best-effort> size=B samples=N lost=L rtt_us min= mean= p50= p90= p99= max=
//
//	directping [--size B] [--count N] [--warmup N] [--best-effort] [--depth N]
//	           [--timeout-ms MS] [--wait-timeout S] [--ros-args ...]
//
// It tells pong to quit (three stamp -9 samples) at the end. Exit 0 with a
// result, 2 on a bad command line or when no pong matched.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/rmw"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, nros.DefaultContext(), os.Args[1:], os.Stdout, os.Stderr))
}

const payloadType = "nros_bench/msg/Payload"

var base = time.Now()

// mono is monotonic ns, always > 0 (stamps <= 0 are control samples).
func mono() int64 { return int64(time.Since(base)) + 1 }

// payload returns a serialized Payload (CDR little endian) of size data
// bytes; the stamp sits at offset 4.
func payload(stamp int64, size int) []byte {
	b := make([]byte, 16+size)
	b[1] = 1
	binary.LittleEndian.PutUint64(b[4:], uint64(stamp))
	binary.LittleEndian.PutUint32(b[12:], uint32(size))
	return b
}

// stampOf returns a sample's stamp_ns (either encapsulation), false if short.
func stampOf(b []byte) (int64, bool) {
	if len(b) < 12 {
		return 0, false
	}
	if b[1]&1 == 0 {
		return int64(binary.BigEndian.Uint64(b[4:])), true
	}
	return int64(binary.LittleEndian.Uint64(b[4:])), true
}

// pinger is the state shared by deliver and the watchdog (guarded by mu).
type pinger struct {
	mu        sync.Mutex
	pub       rmw.Publisher
	buf       []byte
	inFlight  int64 // stamp of the outstanding ping, 0 if none
	sentAt    int64
	i, total  int // round trips started, to do (warm-up included)
	warmup    int
	rtt       []int64
	lost      int
	done      chan struct{}
	finished  bool
	publishFn func([]byte) error
}

// sendLocked starts round trip p.i, or finishes.
func (p *pinger) sendLocked() {
	if p.i >= p.total {
		p.inFlight = 0
		if !p.finished {
			p.finished = true
			close(p.done)
		}
		return
	}
	p.i++
	t := mono()
	binary.LittleEndian.PutUint64(p.buf[4:], uint64(t))
	p.inFlight, p.sentAt = t, t
	_ = p.publishFn(p.buf)
}

func (p *pinger) deliver(s rmw.Sample) {
	st, ok := stampOf(s.Data)
	if !ok || st <= 0 {
		return
	}
	now := mono()
	p.mu.Lock()
	defer p.mu.Unlock()
	if st != p.inFlight || p.finished {
		return // a late echo of a round trip already counted as lost
	}
	if p.i > p.warmup {
		p.rtt = append(p.rtt, now-st)
	}
	p.sendLocked()
}

// watch counts a round trip as lost when its echo is later than timeout,
// and starts the next one.
func (p *pinger) watch(ctx context.Context, timeout time.Duration) {
	tick := time.NewTicker(min(timeout/4, 50*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p.mu.Lock()
		if p.inFlight != 0 && mono()-p.sentAt > int64(timeout) {
			if p.i > p.warmup {
				p.lost++
			}
			p.sendLocked()
		}
		p.mu.Unlock()
	}
}

func nearestRank(v []int64, pct float64) int64 {
	x := pct / 100 * float64(len(v))
	k := int(x)
	if float64(k) < x {
		k++
	}
	return v[max(1, min(k, len(v)))-1]
}

// resultLine is the peers' latency line; it sorts rtt.
func resultLine(label string, size int, rtt []int64, lost int) string {
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

func run(ctx context.Context, rctx *nros.Context, args []string, stdout, stderr io.Writer) int {
	own, ros := args, []string(nil)
	if i := slices.Index(args, "--ros-args"); i >= 0 {
		own, ros = args[:i], args[i:]
	}
	if len(own) > 0 && own[0] == "ping" { // as `pingpong ping`
		own = own[1:]
	}
	fs := flag.NewFlagSet("directping", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.Int("size", 64, "length of the data sequence in bytes")
	count := fs.Int("count", 10000, "measured round trips")
	warmup := fs.Int("warmup", 100, "unmeasured round trips first")
	bestEffort := fs.Bool("best-effort", false, "BEST_EFFORT (default RELIABLE)")
	depth := fs.Int("depth", 10, "KEEP_LAST depth, 0 = KEEP_ALL")
	timeoutMs := fs.Int("timeout-ms", 1000, "a round trip longer than this is lost")
	waitTimeout := fs.Float64("wait-timeout", 30, "seconds to wait for pong")
	if err := fs.Parse(own); err != nil || fs.NArg() > 0 || *size < 0 || *size > 16<<20 || *count <= 0 ||
		*warmup < 0 || *depth < 0 || *timeoutMs <= 0 || !(*waitTimeout > 0) {
		fmt.Fprintln(stderr, "usage: directping [ping] [--size B] [--count N] [--warmup N] [--best-effort] [--depth N] [--timeout-ms MS] [--wait-timeout S] [--ros-args ...]")
		return 2
	}
	if _, err := rctx.Init(ros); err != nil {
		fmt.Fprintf(stderr, "directping: %v\n", err)
		return 2
	}
	q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: *depth}
	label := "go-direct reliable"
	if *bestEffort {
		q.Reliability, label = rmw.BestEffort, "go-direct best-effort"
	}
	if *depth == 0 {
		q.History, q.Depth = rmw.KeepAll, 0
	}
	node, err := nros.NewNode("nros_bench_directping", nros.WithContext(rctx))
	if err != nil {
		fmt.Fprintf(stderr, "directping: %v\n", err)
		return 2
	}
	defer node.Close()
	info := rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}
	tr := rctx.Transport()
	pub, err := tr.NewPublisher(info, "/ping", payloadType, q, rmw.EndpointOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "directping: %v\n", err)
		return 2
	}
	defer pub.Close()
	p := &pinger{pub: pub, buf: payload(1, *size), total: *warmup + *count, warmup: *warmup,
		rtt: make([]int64, 0, *count), done: make(chan struct{}), publishFn: pub.Publish}
	sub, err := tr.NewSubscription(info, "/pong", payloadType, q, p.deliver, rmw.EndpointOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "directping: %v\n", err)
		return 2
	}
	defer sub.Close()
	deadline := time.Now().Add(time.Duration(*waitTimeout * float64(time.Second)))
	for pub.MatchedSubscriptions() == 0 || sub.MatchedPublishers() == 0 {
		if time.Now().After(deadline) || ctx.Err() != nil {
			fmt.Fprintln(stderr, "directping: no pong matched")
			return 2
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // let pong match us too, as the peers do
	p.mu.Lock()
	p.sendLocked()
	p.mu.Unlock()
	p.watch(ctx, time.Duration(*timeoutMs)*time.Millisecond)
	p.mu.Lock()
	rtt, lost := slices.Clone(p.rtt), p.lost
	p.finished = true
	p.mu.Unlock()
	io.WriteString(stdout, resultLine(label, *size, rtt, lost))
	quit := payload(-9, 0)
	for range 3 {
		_ = pub.Publish(quit)
		time.Sleep(20 * time.Millisecond)
	}
	return 0
}
