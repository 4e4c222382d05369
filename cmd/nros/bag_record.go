package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/rmw"
)

// recEntry is what the transport callbacks hand the writing goroutine: a
// new topic, or a message.
type recEntry struct {
	topic *bag.Topic // a topic to declare (data unused)
	name  string
	time  int64
	data  []byte
}

// recQueue is an unbounded queue: a transport callback never blocks on
// the disk, and nothing received is dropped.
type recQueue struct {
	mu     sync.Mutex
	items  []recEntry
	wake   chan struct{}
	closed bool
}

func newRecQueue() *recQueue { return &recQueue{wake: make(chan struct{}, 1)} }

func (q *recQueue) push(e recEntry) {
	q.mu.Lock()
	q.items = append(q.items, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *recQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take returns what is queued, waiting for something; ok is false once the
// queue is closed and empty.
func (q *recQueue) take(buf []recEntry) ([]recEntry, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			out := append(buf[:0], q.items...)
			clear(q.items)
			q.items = q.items[:0]
			q.mu.Unlock()
			return out, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		<-q.wake
	}
}

// graphTopics lists the topics that have publishers, with their types.
func graphTopics(tr rmw.Graph) map[string][]string {
	out := map[string][]string{}
	for _, ti := range rmw.Topics(tr) {
		if ti.Publishers > 0 {
			out[ti.Name] = append(out[ti.Name], ti.Type)
		}
	}
	return out
}

// recordedQoS turns the QoS of a topic's publishers into the profiles a bag
// stores.
func recordedQoS(qs []rmw.QoS) []bag.QoSProfile {
	var out []bag.QoSProfile
	for _, q := range qs {
		q = q.Normalize()
		p := bag.QoSProfile{History: "keep_last", Depth: q.Depth, Reliability: "reliable", Durability: "volatile",
			Deadline: q.Deadline, Lifespan: q.Lifespan, Liveliness: "automatic", LivelinessLeaseDuration: q.LivelinessLeaseDuration}
		if q.History == rmw.KeepAll {
			p.History, p.Depth = "keep_all", 0
		}
		if q.Reliability == rmw.BestEffort {
			p.Reliability = "best_effort"
		}
		if q.Durability == rmw.TransientLocal {
			p.Durability = "transient_local"
		}
		if q.Liveliness == rmw.LivelinessManualByTopic {
			p.Liveliness = "manual_by_topic"
		}
		out = append(out, p)
	}
	return out
}

// recordQoS is the subscription QoS for a topic with these publishers
// (rosbag2's rule): reliable when they all are, transient local when they
// all are, so that every publisher matches; a deep history, so that a
// burst is not lost before the callback runs.
func recordQoS(qs []rmw.QoS) rmw.QoS {
	q := rmw.QoS{Reliability: rmw.Reliable, Durability: rmw.TransientLocal, History: rmw.KeepLast, Depth: 1000}
	if len(qs) == 0 {
		q.Durability = rmw.Volatile
	}
	for _, p := range qs {
		p = p.Normalize()
		if p.Reliability != rmw.Reliable {
			q.Reliability = rmw.BestEffort
		}
		if p.Durability != rmw.TransientLocal {
			q.Durability = rmw.Volatile
		}
	}
	return q
}

// bagRecord is `nros bag record`.
func (e *cliEnv) bagRecord(ctx context.Context, args []string) error {
	const prog = "nros bag record"
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return usageError{err.Error()}
	}
	defer c.Shutdown()
	fs := newFlagSet(prog, "nros bag record [-o DIR] [-s mcap|sqlite3] (TOPIC... | -a) [--use-sim-time] [--max-bag-duration S] [--max-bag-size B] [--ros-args ...]")
	out := fs.String("output", "", "bag directory to create (default rosbag2_YYYY_MM_DD-HH_MM_SS)")
	fs.StringVar(out, "o", "", "short for --output")
	storage := fs.String("storage", bag.StorageMCAP, "storage format: mcap or sqlite3")
	fs.StringVar(storage, "s", bag.StorageMCAP, "short for --storage")
	all := fs.Bool("all", false, "record every topic (found as they appear)")
	fs.BoolVar(all, "a", false, "short for --all")
	simTime := fs.Bool("use-sim-time", false, "stamp messages with ROS time from /clock instead of the wall clock")
	maxDur := fs.Float64("max-bag-duration", 0, "start a new storage file after this many seconds (0: never)")
	fs.Float64Var(maxDur, "d", 0, "short for --max-bag-duration")
	maxSize := fs.Int64("max-bag-size", 0, "start a new storage file after this many bytes (0: never)")
	fs.Int64Var(maxSize, "b", 0, "short for --max-bag-size")
	poll := fs.Duration("polling-interval", 100*time.Millisecond, "how often to look for new topics")
	quiet := fs.Bool("quiet", false, "print nothing but errors")
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	switch {
	case *all && len(pos) > 0:
		return usagef("give TOPIC... or -a, not both")
	case !*all && len(pos) == 0:
		return usagef("give the topics to record, or -a for all")
	case *storage != bag.StorageMCAP && *storage != bag.StorageSQLite3:
		return usagef("--storage must be mcap or sqlite3, not %q", *storage)
	case *maxDur < 0 || math.IsInf(*maxDur, 0) || *maxSize < 0:
		return usagef("--max-bag-duration and --max-bag-size must not be negative")
	case *poll <= 0:
		return usagef("--polling-interval must be positive")
	}
	if *out == "" {
		*out = "rosbag2_" + e.clock.Now().Format("2006_01_02-15_04_05")
	}
	var nodeOpts []nros.NodeOption
	nodeOpts = append(nodeOpts, nros.WithContext(c))
	if *simTime {
		nodeOpts = append(nodeOpts, nros.WithParameterOverrides(map[string]any{nros.UseSimTimeParameter: true}))
	}
	node, err := nros.NewNode("rosbag2_recorder", nodeOpts...)
	if err != nil {
		return err
	}
	defer node.Close()
	var wanted map[string]bool
	if !*all {
		wanted = map[string]bool{}
		for _, p := range pos {
			full, err := node.ResolveTopicName(p)
			if err != nil {
				return usagef("topic %q: %v", p, err)
			}
			wanted[full] = true
		}
	}
	w, err := bag.Create(*out, bag.WriterOptions{Storage: *storage, MaxBagDuration: time.Duration(*maxDur * 1e9), MaxBagSize: *maxSize})
	if err != nil {
		return err
	}
	stamp := func() int64 { return time.Now().UnixNano() }
	if *simTime {
		clk := node.Clock()
		stamp = func() int64 { return clk.Now().Nanoseconds() }
		// The node's /clock subscription needs an executor to run.
		ex := nros.NewExecutor(nros.WithExecutorContext(c))
		ex.AddNode(node)
		spinCtx, stopSpin := context.WithCancel(context.Background())
		spun := make(chan struct{})
		go func() { defer close(spun); ex.Spin(spinCtx) }()
		defer func() { stopSpin(); <-spun }()
	}

	// The writing goroutine: the only one that touches w.
	q := newRecQueue()
	var written uint64
	var writeErr error
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		var buf []recEntry
		for {
			items, ok := q.take(buf)
			if !ok {
				return
			}
			for _, it := range items {
				if writeErr != nil {
					break
				}
				if it.topic != nil {
					writeErr = w.AddTopic(*it.topic)
				} else if writeErr = w.Write(it.name, it.time, it.data); writeErr == nil {
					written++
				}
			}
			buf = items
		}
	}()

	tr := c.Transport()
	info := rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}
	subs := map[string]rmw.Subscription{}
	defer func() {
		for _, s := range subs {
			s.Close()
		}
	}()
	subscribe := func() error {
		for name, types := range graphTopics(tr) {
			if subs[name] != nil || wanted != nil && !wanted[name] {
				continue
			}
			typ := types[0]
			_, qos := graphPublishers(tr, name)
			t := &bag.Topic{Name: name, Type: typ, SerializationFormat: "cdr", OfferedQoSProfiles: recordedQoS(qos)}
			q.push(recEntry{topic: t})
			sub, err := tr.NewSubscription(info, name, typ, recordQoS(qos), func(s rmw.Sample) {
				q.push(recEntry{name: name, time: stamp(), data: append([]byte(nil), s.Data...)})
			}, rmw.EndpointOptions{})
			if err != nil {
				return fmt.Errorf("subscribe to %s: %w", name, err)
			}
			subs[name] = sub
			if !*quiet {
				fmt.Fprintf(e.stdout, "subscribed to %s (%s)\n", name, typ)
			}
			if len(types) > 1 {
				fmt.Fprintf(e.stderr, "%s: %s has publishers of %d types; recording %s\n", prog, name, len(types), typ)
			}
		}
		return nil
	}
	if !*quiet {
		fmt.Fprintf(e.stdout, "recording into %s (%s)\n", *out, *storage)
	}
	var runErr error
	for {
		if runErr = subscribe(); runErr != nil {
			break
		}
		if e.clock.SleepUntil(ctx, e.clock.Now().Add(*poll)) != nil {
			break // SIGINT/SIGTERM: the normal end
		}
	}
	// Stop receiving, then write everything received, then close the bag.
	for n, s := range subs {
		s.Close()
		delete(subs, n)
	}
	q.close()
	<-wrote
	cerr := w.Close()
	for _, err := range []error{runErr, writeErr, cerr} {
		if err != nil {
			return err
		}
	}
	if !*quiet {
		var names []string
		for _, ti := range w.Metadata().Topics {
			names = append(names, fmt.Sprintf("%s %d", ti.Topic.Name, ti.MessageCount))
		}
		fmt.Fprintf(e.stdout, "recorded %d messages into %s (%s)\n", written, *out, strings.Join(names, ", "))
	}
	return nil
}
