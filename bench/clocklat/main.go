// Command clocklat measures how long a simulated-time sample takes to turn
// into a ROS-timer callback in a Go node. It runs one node with
// use_sim_time and one ROS-time timer whose period is the clock's sample
// step, so every published /clock sample crosses one timer deadline. Each
// callback after the first sample records the wall time (CLOCK_REALTIME,
// ns since the epoch) as its first action and the node's ROS time; at the
// end it prints one line per callback:
//
//	cb_wall_ns sec nanosec
//
// The sim time is the clock sample that triggered the callback, so the
// lines pair with clockpub's "wall_ns sec nanosec" (written just before
// each write) by sim time. scripts/bench.sh does the pairing.
//
//	clocklat [--count N] [--timeout S] [--period D] [--rx FILE] [--stamps PREFIX] [--ros-args ...]
//
// With --rx the node measures the bare receipt instead, as clocksub does:
// it runs without use_sim_time and without a timer, with only a raw
// subscription to the clock topic, and writes the wall time at which the
// transport hands each sample out to FILE in the same format, ending after
// N samples. (Beside the node's own /clock subscription, a raw one would
// be served after it, hop to the executor included.)
//
// With --stamps PREFIX (a build made with -tags nrosstamp) each callback
// also takes the marks of package wakestamp and writes, in the same
// format, PREFIX.woke (when the runtime's poller woke the goroutine that
// leads the /clock socket) and PREFIX.read (when its read returned the
// sample's bytes): scripts/bench-wake.sh tells the wake from the work
// after it with them.
//
// It exits 0 after N callbacks, 3 on --timeout before that (printing what
// it has), 2 on a bad command line.
package main

import (
	"bufio"
	"context"
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
	"github.com/nros-go/nros/internal/wakestamp"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
	_ "github.com/nros-go/nros/sros2" // scripts/bench-secure.sh runs it secured
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, nros.DefaultContext(), os.Args[1:], os.Stdout, os.Stderr))
}

// record is one timer callback: wall time first, then ROS time.
type record struct{ wall, sim int64 }

func run(ctx context.Context, rctx *nros.Context, args []string, stdout, stderr io.Writer) int {
	own, ros := args, []string(nil)
	if i := slices.Index(args, "--ros-args"); i >= 0 {
		own, ros = args[:i], args[i:]
	}
	fs := flag.NewFlagSet("clocklat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	count := fs.Int("count", 300, "callbacks to record")
	timeout := fs.Float64("timeout", 30, "seconds before giving up")
	period := fs.Duration("period", 10*time.Millisecond, "ROS timer period (the clock's sample step)")
	rxFile := fs.String("rx", "", "also write the bare receipt of each /clock sample (a second, raw subscription) to FILE")
	stamps := fs.String("stamps", "", "write the wake and read marks of each callback to PREFIX.woke and PREFIX.read (a build with -tags nrosstamp)")
	if err := fs.Parse(own); err != nil || fs.NArg() > 0 || *count <= 0 || *period <= 0 || !(*timeout > 0) {
		fmt.Fprintln(stderr, "usage: clocklat [--count N] [--timeout S] [--period D] [--rx FILE] [--stamps PREFIX] [--ros-args ...]")
		return 2
	}
	if *stamps != "" && (!wakestamp.Enabled || *rxFile != "") {
		fmt.Fprintln(stderr, "clocklat: --stamps needs a build with -tags nrosstamp, and no --rx")
		return 2
	}
	// use_sim_time is on unless the caller's ROS args say otherwise (or
	// --rx measures the bare receipt).
	sim := "use_sim_time:=true"
	if *rxFile != "" {
		sim = "use_sim_time:=false"
	}
	if _, err := rctx.Init(append([]string{"--ros-args", "-p", sim}, trimRosArgs(ros)...)); err != nil {
		fmt.Fprintf(stderr, "clocklat: %v\n", err)
		return 2
	}
	node, err := nros.NewNode("clocklat", nros.WithContext(rctx))
	if err != nil {
		fmt.Fprintf(stderr, "clocklat: %v\n", err)
		return 2
	}
	defer node.Close()
	clk := node.Clock()
	recs := make([]record, 0, *count)
	var woke, read []record // the marks of each callback, with --stamps
	if *stamps != "" {
		woke, read = make([]record, 0, *count), make([]record, 0, *count)
	}
	var rx []record // written on the transport's goroutine, read after Spin
	var rxMu sync.Mutex
	spinCtx, cancel := context.WithTimeout(ctx, time.Duration(*timeout*float64(time.Second)))
	defer cancel()
	if *rxFile != "" {
		rx = make([]record, 0, *count)
		info := rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}
		q := rmw.QoS{Reliability: rmw.BestEffort, Durability: rmw.Volatile, History: rmw.KeepLast, Depth: 1}
		topic, err := node.ResolveTopicName("/clock") // with the command line's remapping
		if err != nil {
			fmt.Fprintf(stderr, "clocklat: %v\n", err)
			return 2
		}
		sub, err := rctx.Transport().NewSubscription(info, topic, "rosgraph_msgs/msg/Clock", q, func(s rmw.Sample) {
			w := time.Now().UnixNano()
			var m rosgraph_msgs.Clock
			if msg.Unmarshal(s.Data, &m) != nil {
				return
			}
			rxMu.Lock()
			if len(rx) < cap(rx) {
				rx = append(rx, record{w, int64(m.Clock.Sec)*1e9 + int64(m.Clock.Nanosec)})
				if len(rx) == cap(rx) {
					cancel()
				}
			}
			rxMu.Unlock()
		}, rmw.EndpointOptions{TypeHash: (*rosgraph_msgs.Clock)(nil).TypeHash()}) // Zenoh keys carry it
		if err != nil {
			fmt.Fprintf(stderr, "clocklat: %v\n", err)
			return 2
		}
		defer sub.Close()
	} else if _, err := node.CreateTimer(clk, *period, func() {
		w := time.Now().UnixNano()
		// Before the first sample a ROS clock reads system time.
		wokeNs, readNs := wakestamp.Take()
		if clk.Started() && len(recs) < cap(recs) {
			sim := clk.Now().Nanoseconds()
			recs = append(recs, record{w, sim})
			if *stamps != "" && wokeNs != 0 && readNs != 0 {
				woke = append(woke, record{wokeNs, sim})
				read = append(read, record{readNs, sim})
			}
			if len(recs) == cap(recs) {
				cancel()
			}
		}
	}); err != nil {
		fmt.Fprintf(stderr, "clocklat: %v\n", err)
		return 2
	}
	exec := nros.NewExecutor(nros.WithExecutorContext(rctx))
	exec.AddNode(node)
	if err := exec.Spin(spinCtx); err != nil {
		fmt.Fprintf(stderr, "clocklat: %v\n", err)
		return 1
	}
	if err := write(stdout, recs); err != nil {
		fmt.Fprintf(stderr, "clocklat: %v\n", err)
		return 1
	}
	if *stamps != "" {
		for _, f := range []struct {
			ext  string
			recs []record
		}{{".woke", woke}, {".read", read}} {
			if err := writeFile(*stamps+f.ext, f.recs); err != nil {
				fmt.Fprintf(stderr, "clocklat: %v\n", err)
				return 1
			}
		}
	}
	if *rxFile != "" {
		rxMu.Lock()
		got := slices.Clone(rx)
		rxMu.Unlock()
		if err := writeFile(*rxFile, got); err != nil {
			fmt.Fprintf(stderr, "clocklat: %v\n", err)
			return 1
		}
	}
	if *rxFile != "" {
		rxMu.Lock()
		n := len(rx)
		rxMu.Unlock()
		if n < *count {
			fmt.Fprintf(stderr, "clocklat: timeout after %d of %d receipts\n", n, *count)
			return 3
		}
		return 0
	}
	if len(recs) < *count {
		fmt.Fprintf(stderr, "clocklat: timeout after %d of %d callbacks\n", len(recs), *count)
		return 3
	}
	return 0
}

// write prints "wall_ns sec nanosec" per record.
func write(out io.Writer, recs []record) error {
	w := bufio.NewWriter(out)
	for _, r := range recs {
		sec, ns := r.sim/1e9, r.sim%1e9
		if ns < 0 {
			sec, ns = sec-1, ns+1e9
		}
		fmt.Fprintf(w, "%d %d %d\n", r.wall, sec, ns)
	}
	return w.Flush()
}

// writeFile writes recs to the file name in write's format.
func writeFile(name string, recs []record) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	err = write(f, recs)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// trimRosArgs drops a leading --ros-args (we add our own).
func trimRosArgs(a []string) []string {
	if len(a) > 0 && a[0] == "--ros-args" {
		return a[1:]
	}
	return a
}
