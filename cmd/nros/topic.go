package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/rmw"
)

const topicUsage = `usage: nros topic <list|info|echo|hz|bw|pub> ...

  nros topic list [-t]
  nros topic info TOPIC [-v]
  nros topic echo TOPIC [TYPE] [--once] [--count N] [--full-length]
  nros topic hz TOPIC [--window N] [--use-sim-time]
  nros topic bw TOPIC [--window N]
  nros topic pub TOPIC TYPE [VALUES] [--rate HZ] [--times N | --once]

VALUES is YAML as for 'ros2 topic pub', e.g. "{data: hello}".
`

func runTopic(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return newEnv(stdout, stderr).topicCmd(ctx, args)
}

// topicCmd is `nros topic`: generic echo and pub of any registered type,
// talking to the transport directly in serialized form.
func (e *cliEnv) topicCmd(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, topicUsage)
		return 2
	}
	switch args[0] {
	case "list":
		return exitCode(e.stderr, "nros topic list", e.topicList(ctx, args[1:]))
	case "info":
		return exitCode(e.stderr, "nros topic info", e.topicInfo(ctx, args[1:]))
	case "hz":
		return exitCode(e.stderr, "nros topic hz", e.topicRate(ctx, args[1:], false))
	case "bw":
		return exitCode(e.stderr, "nros topic bw", e.topicRate(ctx, args[1:], true))
	case "echo":
		return exitCode(e.stderr, "nros topic echo", e.topicEcho(ctx, args[1:]))
	case "pub":
		return exitCode(e.stderr, "nros topic pub", e.topicPub(ctx, args[1:]))
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, topicUsage)
		return 0
	}
	fmt.Fprintf(e.stderr, "nros topic: unknown verb %q\n\n%s", args[0], topicUsage)
	return 2
}

// qosFlags are the --qos-* flags of echo and pub (as ros2 topic has them).
type qosFlags struct {
	reliability, durability string
	depth                   int
}

func (q *qosFlags) register(fs *flag.FlagSet, reliability string, depth int) {
	fs.StringVar(&q.reliability, "qos-reliability", reliability, "reliable or best_effort")
	fs.StringVar(&q.durability, "qos-durability", "volatile", "volatile or transient_local")
	fs.IntVar(&q.depth, "qos-depth", depth, "keep-last depth")
}

func (q *qosFlags) qos() (rmw.QoS, error) {
	out := rmw.QoS{History: rmw.KeepLast, Depth: q.depth}
	switch q.reliability {
	case "reliable":
		out.Reliability = rmw.Reliable
	case "best_effort", "best-effort":
		out.Reliability = rmw.BestEffort
	default:
		return out, usagef("--qos-reliability %q: want reliable or best_effort", q.reliability)
	}
	switch q.durability {
	case "volatile":
		out.Durability = rmw.Volatile
	case "transient_local", "transient-local":
		out.Durability = rmw.TransientLocal
	default:
		return out, usagef("--qos-durability %q: want volatile or transient_local", q.durability)
	}
	if q.depth < 1 {
		return out, usagef("--qos-depth %d: want 1 or more", q.depth)
	}
	return out, nil
}

// endpointNode makes the node a topic command's endpoints belong to and
// resolves topic against it (namespace and --ros-args remapping).
func endpointNode(c *nros.Context, name, topic string) (*nros.Node, string, rmw.NodeInfo, error) {
	node, err := nros.NewNode(name, nros.WithContext(c))
	if err != nil {
		return nil, "", rmw.NodeInfo{}, nodeError(err)
	}
	full, err := node.ResolveTopicName(topic)
	if err != nil {
		node.Close()
		return nil, "", rmw.NodeInfo{}, usageError{cleanMessage(err)}
	}
	return node, full, rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}, nil
}

// newMessage returns a zero message of a type named in any accepted form.
func newMessage(typ string) (msg.Message, error) {
	m, ok := msg.New(typ)
	if !ok {
		return nil, usagef("unknown message type %q (known: %s)", typ, strings.Join(msg.Types(), ", "))
	}
	return m, nil
}

func (e *cliEnv) topicEcho(ctx context.Context, args []string) error {
	const prog = "nros topic echo"
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	fs := newFlagSet(prog, "nros topic echo TOPIC [TYPE] [--once] [--count N] [--ros-args ...]")
	once := fs.Bool("once", false, "print the first message received, then exit")
	count := fs.Int("count", 0, "exit after N messages (0: never)")
	full := fs.Bool("full-length", false, "do not truncate long strings and arrays")
	trunc := fs.Int("truncate-length", msg.DefaultTruncateLength, "truncate strings and arrays after this length")
	waitTimeout := fs.Float64("wait-timeout", 2, "without TYPE: seconds to wait for a publisher to show the topic's type")
	var qf qosFlags
	qf.register(fs, "", 10)
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("want TOPIC [TYPE], got %d arguments", len(pos))
	}
	if *count < 0 {
		return usagef("--count %d: want 0 (no limit) or more", *count)
	}
	if *once {
		*count = 1
	}
	// Check the QoS flags now, before waiting for a publisher (the
	// reliability may still be left to discovery).
	probe := qf
	if probe.reliability == "" {
		probe.reliability = "best_effort"
	}
	if _, err := probe.qos(); err != nil {
		return err
	}
	opts := msg.YAMLOptions{TruncateLength: *trunc}
	if *full {
		opts.TruncateLength = 0
	}
	node, topic, info, err := endpointNode(c, "nros_topic_echo", pos[0])
	if err != nil {
		return err
	}
	defer node.Close()
	tr := c.Transport()
	typ := ""
	if len(pos) == 2 {
		typ = pos[1]
	} else if t, ok := e.lookupType(ctx, tr, topic, time.Duration(*waitTimeout*1e9)); ok {
		typ = t
	} else {
		return usagef("cannot determine the type of %s: give it as TYPE (nros topic echo TOPIC TYPE)", topic)
	}
	m, err := echoMessage(typ) // compiled in, or msg/dynamic (dynamic.go)
	if err != nil {
		return err
	}
	// Without --qos-reliability, best effort: it matches every writer.
	if qf.reliability == "" {
		qf.reliability = echoReliability(tr, topic)
	}
	qos, err := qf.qos()
	if err != nil {
		return err
	}

	// The transport hands samples over on its goroutine; they are copied
	// into a bounded queue and decoded and printed here.
	samples := make(chan []byte, 1024)
	var overflow atomic.Uint64
	sub, err := tr.NewSubscription(info, topic, m.TypeName(), qos, func(s rmw.Sample) {
		select {
		case samples <- append([]byte(nil), s.Data...):
		default:
			overflow.Add(1)
		}
	}, rmw.EndpointOptions{})
	if err != nil {
		return fmt.Errorf("subscribe to %s: %w", topic, err)
	}
	defer sub.Close()
	printed := 0
	var out []byte
	for *count == 0 || printed < *count {
		var data []byte
		select {
		case <-ctx.Done():
			return nil
		case data = <-samples:
		}
		if err := msg.Unmarshal(data, m); err != nil {
			fmt.Fprintf(e.stderr, "%s: dropped a sample: %v\n", prog, err)
			continue
		}
		out = append(append(out[:0], msg.FormatYAML(m, opts)...), "---\n"...)
		if _, err := e.stdout.Write(out); err != nil {
			return err
		}
		printed++
	}
	if n := overflow.Load(); n > 0 {
		fmt.Fprintf(e.stderr, "%s: %d samples dropped (output too slow)\n", prog, n)
	}
	return nil
}

// graphPublishers lists the types and QoS of the publishers on topic, local
// and discovered.
func graphPublishers(tr rmw.Graph, topic string) (types []string, qos []rmw.QoS) {
	for _, ep := range tr.Endpoints(topic) {
		if ep.Publisher {
			types, qos = append(types, ep.Type), append(qos, ep.QoS)
		}
	}
	return types, qos
}

// lookupType finds the type of topic's publishers in the graph, waiting
// up to timeout for one to be discovered. It answers only when they all
// use one type.
func (e *cliEnv) lookupType(ctx context.Context, tr rmw.Transport, topic string, timeout time.Duration) (string, bool) {
	start := e.clock.Now()
	for {
		if types, _ := graphPublishers(tr, topic); len(types) > 0 {
			for _, t := range types[1:] {
				if t != types[0] {
					return "", false
				}
			}
			return types[0], true
		}
		if e.clock.Now().Sub(start) >= timeout || e.clock.SleepUntil(ctx, e.clock.Now().Add(20*time.Millisecond)) != nil {
			return "", false
		}
	}
}

// echoReliability chooses echo's reliability as ros2 does: reliable when
// every known publisher is, best effort otherwise (and when none is known),
// so that every writer matches.
func echoReliability(tr rmw.Graph, topic string) string {
	_, qos := graphPublishers(tr, topic)
	if len(qos) == 0 {
		return "best_effort"
	}
	for _, q := range qos {
		if q.Reliability != rmw.Reliable {
			return "best_effort"
		}
	}
	return "reliable"
}

func (e *cliEnv) topicPub(ctx context.Context, args []string) error {
	const prog = "nros topic pub"
	c, rest, err := e.newCommandContext(prog, args)
	if err != nil {
		return err
	}
	defer c.Shutdown()
	fs := newFlagSet(prog, "nros topic pub TOPIC TYPE [VALUES] [--rate HZ] [--times N | --once] [--ros-args ...]")
	rate := fs.Float64("rate", 1, "publishing rate in Hz")
	fs.Float64Var(rate, "r", 1, "short for --rate")
	times := fs.Int("times", 0, "publish this many times, then exit (0: for ever)")
	fs.IntVar(times, "t", 0, "short for --times")
	once := fs.Bool("once", false, "publish one message, then exit (as --times 1)")
	fs.BoolVar(once, "1", false, "short for --once")
	wait := fs.Int("wait-matching-subscriptions", -1, "wait for N matched subscriptions before publishing (default 1 with --times/--once, else 0)")
	fs.IntVar(wait, "w", -1, "short for --wait-matching-subscriptions")
	waitTimeout := fs.Float64("wait-timeout", 10, "seconds to wait for matching subscriptions before publishing anyway (0: for ever)")
	settle := fs.Float64("settle", 0.3, "seconds to pause after subscriptions matched, so that they match us too")
	lingerSec := fs.Float64("linger", 0.2, "with --times/--once: seconds to stay after the last sample")
	quiet := fs.Bool("quiet", false, "do not print the published messages")
	var qf qosFlags
	qf.register(fs, "reliable", 10)
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return flagError(fs, err, e.stdout)
	}
	if len(pos) < 2 || len(pos) > 3 {
		return usagef("want TOPIC TYPE [VALUES], got %d arguments", len(pos))
	}
	if !(*rate > 0) || math.IsInf(*rate, 0) {
		return usagef("--rate %v: want a positive number of Hz", *rate)
	}
	if *times < 0 {
		return usagef("--times %d: want 0 (for ever) or more", *times)
	}
	if *once {
		*times = 1
	}
	if *wait < 0 {
		*wait = 0
		if *times > 0 {
			*wait = 1
		}
	}
	qos, err := qf.qos()
	if err != nil {
		return err
	}
	m, err := newMessage(pos[1])
	if err != nil {
		return err
	}
	values := "{}"
	if len(pos) == 3 {
		values = pos[2]
	}
	if err := fillMessage(m, values); err != nil {
		return usagef("VALUES: %v", err)
	}
	data := msg.Marshal(m, true, nil)
	node, topic, info, err := endpointNode(c, "nros_topic_pub", pos[0])
	if err != nil {
		return err
	}
	defer node.Close()
	pub, err := c.Transport().NewPublisher(info, topic, m.TypeName(), qos, rmw.EndpointOptions{})
	if err != nil {
		return fmt.Errorf("publish on %s: %w", topic, err)
	}
	defer pub.Close()
	if !waitMatched(ctx, e.clock, *wait, time.Duration(*waitTimeout*1e9), pub.MatchedSubscriptions) {
		if ctx.Err() != nil {
			return nil
		}
		fmt.Fprintf(e.stderr, "%s: %d subscription(s) not matched after %gs, publishing anyway\n", prog, *wait, *waitTimeout)
	} else if *wait > 0 && e.clock.SleepUntil(ctx, e.clock.Now().Add(time.Duration(*settle*1e9))) != nil {
		return nil
	}
	linger := time.Duration(*lingerSec * 1e9)
	repr := pyRepr(reflect.ValueOf(m))
	if !*quiet {
		fmt.Fprintln(e.stdout, "publisher: beginning loop")
	}
	period := time.Duration(float64(time.Second) / *rate)
	next := e.clock.Now()
	for i := 1; *times == 0 || i <= *times; i++ {
		if err := pub.Publish(data); err != nil {
			return fmt.Errorf("publish: %w", err)
		}
		if !*quiet {
			fmt.Fprintf(e.stdout, "publishing #%d: %s\n\n", i, repr)
		}
		if *times != 0 && i == *times {
			// Give reliable readers time to acknowledge or repair the
			// last samples before the writer goes away.
			_ = e.clock.SleepUntil(ctx, e.clock.Now().Add(linger))
			break
		}
		next = next.Add(period)
		if e.clock.SleepUntil(ctx, next) != nil {
			return nil
		}
	}
	return nil
}

// fillMessage sets the fields of m named in the YAML mapping src (ROS
// snake_case names; unnamed fields keep their zero values).
func fillMessage(m msg.Message, src string) error {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return err
	}
	if doc.Kind == 0 { // empty input
		return nil
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		n := doc.Content[0]
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		return setValue(reflect.ValueOf(m).Elem(), n, "")
	}
	return fmt.Errorf("want one YAML mapping")
}

// setValue stores the YAML node n into v (path names the field for errors).
func setValue(v reflect.Value, n *yaml.Node, path string) error {
	where := func() string {
		if path == "" {
			return "message"
		}
		return path
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch v.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s: want a mapping, got %q", where(), n.Value)
		}
		names := map[string]int{}
		for i := 0; i < v.NumField(); i++ {
			if f := v.Type().Field(i); f.IsExported() {
				names[msg.SnakeCase(f.Name)] = i
			}
		}
		for k := 0; k+1 < len(n.Content); k += 2 {
			key := n.Content[k].Value
			i, ok := names[key]
			if !ok {
				return fmt.Errorf("%s has no field %q", where(), key)
			}
			p := key
			if path != "" {
				p = path + "." + key
			}
			if err := setValue(v.Field(i), n.Content[k+1], p); err != nil {
				return err
			}
		}
		return nil
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return setValue(v.Elem(), n, path)
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 && n.Kind == yaml.ScalarNode && n.Tag == "!!binary" {
				var b []byte
				if err := n.Decode(&b); err != nil {
					return fmt.Errorf("%s: %v", where(), err)
				}
				v.SetBytes(b)
				return nil
			}
			return fmt.Errorf("%s: want a list, got %q", where(), n.Value)
		}
		if v.Kind() == reflect.Array {
			if len(n.Content) != v.Len() {
				return fmt.Errorf("%s: want %d elements, got %d", where(), v.Len(), len(n.Content))
			}
		} else {
			v.Set(reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content)))
		}
		for i, c := range n.Content {
			if err := setValue(v.Index(i), c, fmt.Sprintf("%s[%d]", where(), i)); err != nil {
				return err
			}
		}
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("%s: want a single value", where())
	}
	s := n.Value
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("%s: want true or false, got %q", where(), s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 64)
		if err != nil || v.OverflowInt(i) {
			return fmt.Errorf("%s: want an integer that fits %s, got %q", where(), v.Type(), s)
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		u, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
		if err != nil || v.OverflowUint(u) {
			return fmt.Errorf("%s: want an integer that fits %s, got %q", where(), v.Type(), s)
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		var f float64
		if err := n.Decode(&f); err != nil {
			return fmt.Errorf("%s: want a number, got %q", where(), s)
		}
		if v.Kind() == reflect.Float32 && !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
			return fmt.Errorf("%s: %q does not fit float32", where(), s)
		}
		v.SetFloat(f)
	default:
		return fmt.Errorf("%s: cannot set a %s", where(), v.Type())
	}
	return nil
}

// pyRepr renders a message as `ros2 topic pub` prints what it publishes:
// std_msgs.msg.String(data='hello').
func pyRepr(v reflect.Value) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("None")
			return
		}
		writeRepr(b, v.Elem())
		return
	case reflect.Struct:
		name := v.Type().Name()
		if v.CanAddr() {
			if m, ok := v.Addr().Interface().(msg.Message); ok {
				name = strings.ReplaceAll(m.TypeName(), "/", ".")
			}
		} else if m, ok := reflect.New(v.Type()).Interface().(msg.Message); ok {
			name = strings.ReplaceAll(m.TypeName(), "/", ".")
		}
		b.WriteString(name)
		b.WriteByte('(')
		first := true
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString(msg.SnakeCase(f.Name))
			b.WriteByte('=')
			writeRepr(b, v.Field(i))
		}
		b.WriteByte(')')
	case reflect.Slice, reflect.Array:
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, v.Index(i))
		}
		b.WriteByte(']')
	case reflect.String:
		b.WriteByte('\'')
		for _, r := range v.String() {
			switch r {
			case '\'', '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			case '\n':
				b.WriteString(`\n`)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('\'')
	case reflect.Bool:
		if v.Bool() {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case reflect.Float32, reflect.Float64:
		b.WriteString(msg.FormatYAMLFloat(v.Float()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	default:
		fmt.Fprint(b, v.Interface())
	}
}
