// Command echopong is a latency-only pong for the pingpong protocol of the
// reference peers (topics /ping and /pong, nros_bench/msg/Payload): it
// republishes every sample with stamp_ns >= 0 from the transport's deliver
// function, on the receive goroutine, with no hand-off to another
// goroutine. scripts/bench.sh runs it next to `nros bench pingpong pong`
// to show what the transport does without the CLI's queueing.
//
//	echopong [pong] [--best-effort] [--depth N] [--timeout S] [--cpuprofile FILE] [--ros-args ...]
//
// It exits 0 when ping sends the quit sample (stamp_ns -9), 3 after
// --timeout seconds without one, 2 on a bad command line. Control samples
// other than quit (throughput mode) are not answered.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/rmw"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, nros.DefaultContext(), os.Args[1:], os.Stderr))
}

const payloadType = "nros_bench/msg/Payload"

// stampAt is the offset of stamp_ns in a serialized Payload (after the
// 4-byte encapsulation header; little endian when the header says so).
const stampAt = 4

// stamp returns a sample's stamp_ns, or false if the sample is too short.
func stamp(b []byte) (int64, bool) {
	if len(b) < stampAt+8 {
		return 0, false
	}
	if b[1]&1 == 0 { // big-endian encapsulation
		return int64(binary.BigEndian.Uint64(b[stampAt:])), true
	}
	return int64(binary.LittleEndian.Uint64(b[stampAt:])), true
}

func run(ctx context.Context, rctx *nros.Context, args []string, stderr io.Writer) int {
	own, ros := args, []string(nil)
	if i := slices.Index(args, "--ros-args"); i >= 0 {
		own, ros = args[:i], args[i:]
	}
	fs := flag.NewFlagSet("echopong", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bestEffort := fs.Bool("best-effort", false, "BEST_EFFORT (default RELIABLE)")
	depth := fs.Int("depth", 10, "KEEP_LAST depth, 0 = KEEP_ALL")
	timeout := fs.Float64("timeout", 120, "seconds to wait for ping's quit sample")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to FILE")
	if len(own) > 0 && own[0] == "pong" { // as `pingpong pong`
		own = own[1:]
	}
	if err := fs.Parse(own); err != nil || fs.NArg() > 0 || *depth < 0 || !(*timeout > 0) {
		fmt.Fprintln(stderr, "usage: echopong [pong] [--best-effort] [--depth N] [--timeout S] [--cpuprofile FILE] [--ros-args ...]")
		return 2
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "echopong: %v\n", err)
			return 2
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if _, err := rctx.Init(ros); err != nil {
		fmt.Fprintf(stderr, "echopong: %v\n", err)
		return 2
	}
	q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: *depth}
	if *bestEffort {
		q.Reliability = rmw.BestEffort
	}
	if *depth == 0 {
		q.History, q.Depth = rmw.KeepAll, 0
	}
	node, err := nros.NewNode("nros_bench_echopong", nros.WithContext(rctx))
	if err != nil {
		fmt.Fprintf(stderr, "echopong: %v\n", err)
		return 2
	}
	defer node.Close()
	info := rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}
	tr := rctx.Transport()
	pub, err := tr.NewPublisher(info, "/pong", payloadType, q, rmw.EndpointOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "echopong: %v\n", err)
		return 2
	}
	defer pub.Close()
	quit := make(chan struct{})
	quitOnce := false
	sub, err := tr.NewSubscription(info, "/ping", payloadType, q, func(s rmw.Sample) {
		st, ok := stamp(s.Data)
		switch {
		case !ok:
		case st >= 0:
			if err := pub.Publish(s.Data); err != nil {
				fmt.Fprintf(stderr, "echopong: publish: %v\n", err)
			}
		case st == -9 && !quitOnce: // deliver calls come one at a time
			quitOnce = true
			close(quit)
		}
	}, rmw.EndpointOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "echopong: %v\n", err)
		return 2
	}
	defer sub.Close()
	select {
	case <-quit:
		return 0
	case <-ctx.Done():
		return 0
	case <-time.After(time.Duration(*timeout * float64(time.Second))):
		fmt.Fprintln(stderr, "echopong: no quit sample before --timeout")
		return 3
	}
}
