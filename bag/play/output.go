package play

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/rosgraph_msgs"
	"github.com/nros-go/nros/rmw"
)

// clockType is the ROS type of /clock.
const clockType = "rosgraph_msgs/msg/Clock"

// ErrClockReplaced is the reason a recorded /clock is not played when the
// Player publishes /clock of its own (Options.ClockRate), as rosbag2 does.
var ErrClockReplaced = errors.New("the player publishes /clock")

// Topic is a recorded topic a Player plays, and where.
type Topic struct {
	// Recorded is the topic as the bag has it.
	Recorded *bag.Topic
	// Name is the fully qualified name it is published on (after
	// resolution against the node and remapping).
	Name string
	// QoS is the profile it is published with (see New).
	QoS rmw.QoS
}

// Skip is a recorded topic that a Player does not play, and why: a name
// that does not resolve, a serialization format other than CDR, or the
// recorded /clock that Options.ClockRate replaces (ErrClockReplaced).
// Topics left out by Options.Topics and Options.Exclude are not listed.
type Skip struct {
	Topic *bag.Topic
	Err   error
}

// output is where a Player's messages and /clock samples go.
type output interface {
	publish(m bag.Message) error
	publishClock(t int64) error
	close()
}

// nodeOutput publishes on a node's transport: one publisher per played
// topic, with the raw recorded bytes, and one on /clock.
type nodeOutput struct {
	pubs     map[*bag.Topic]rmw.Publisher
	clock    rmw.Publisher
	clockMsg rosgraph_msgs.Clock
	clockBuf []byte
}

func (o *nodeOutput) publish(m bag.Message) error {
	p := o.pubs[m.Topic]
	if p == nil {
		return nil
	}
	if err := p.Publish(m.Data); err != nil {
		return fmt.Errorf("publish on %s: %w", m.Topic.Name, err)
	}
	return nil
}

func (o *nodeOutput) publishClock(t int64) error {
	sec, nsec, err := nros.TimeFromNanoseconds(t).SecNanosec()
	if err != nil {
		return fmt.Errorf("publish /clock: %w", err)
	}
	o.clockMsg.Clock.Sec, o.clockMsg.Clock.Nanosec = sec, nsec
	o.clockBuf = msg.Marshal(&o.clockMsg, true, o.clockBuf[:0])
	if err := o.clock.Publish(o.clockBuf); err != nil {
		return fmt.Errorf("publish /clock: %w", err)
	}
	return nil
}

func (o *nodeOutput) close() {
	for _, p := range o.pubs {
		p.Close()
	}
	if o.clock != nil {
		o.clock.Close()
	}
}

// selection is the outcome of choosing the topics to play.
type selection struct {
	topics  []Topic
	skipped []Skip
}

// selectTopics decides, for each recorded topic, whether and where it
// plays: filters first, then the /clock rule, then remapping.
func selectTopics(node *nros.Node, topics []*bag.Topic, o *Options) (selection, error) {
	var sel selection
	clockTopic, err := node.ResolveTopicName(nros.DefaultClockTopic)
	if err != nil {
		return sel, err
	}
	for _, t := range topics {
		full, err := node.ResolveTopicName(t.Name)
		if err != nil {
			sel.skipped = append(sel.skipped, Skip{t, err})
			continue
		}
		if len(o.Topics) > 0 && !inSet(o.Topics, t, full) || inSet(o.Exclude, t, full) {
			continue
		}
		if o.ClockRate > 0 && full == clockTopic && t.Type == clockType {
			sel.skipped = append(sel.skipped, Skip{t, ErrClockReplaced})
			continue
		}
		if full, err = remap(node, o.Remap, t.Name, full); err != nil {
			return sel, err
		}
		if t.SerializationFormat != "" && t.SerializationFormat != "cdr" {
			sel.skipped = append(sel.skipped, Skip{t, fmt.Errorf("serialization format %q", t.SerializationFormat)})
			continue
		}
		sel.topics = append(sel.topics, Topic{Recorded: t, Name: full, QoS: playbackQoS(t.OfferedQoSProfiles)})
	}
	return sel, nil
}

// inSet reports whether a topic is named in set, as recorded or resolved
// (with or without its leading slash).
func inSet(set []string, t *bag.Topic, full string) bool {
	for _, s := range set {
		if s == t.Name || s == full || "/"+strings.TrimPrefix(s, "/") == full {
			return true
		}
	}
	return false
}

// remap applies a FROM -> TO rename, FROM being the recorded or the
// resolved name, and resolves the result.
func remap(node *nros.Node, m map[string]string, recorded, full string) (string, error) {
	to, ok := m[recorded]
	if !ok {
		if to, ok = m[full]; !ok {
			return full, nil
		}
	}
	r, err := node.ResolveTopicName(to)
	if err != nil {
		return "", fmt.Errorf("remap %s to %q: %w", recorded, to, err)
	}
	return r, nil
}

// newNodeOutput makes the publishers of sel on node's transport, and the
// /clock publisher when withClock.
func newNodeOutput(node *nros.Node, sel selection, withClock bool) (*nodeOutput, error) {
	info := rmw.NodeInfo{Name: node.Name(), Namespace: node.Namespace(), Enclave: "/"}
	tr := node.Context().Transport()
	o := &nodeOutput{pubs: map[*bag.Topic]rmw.Publisher{}}
	for _, t := range sel.topics {
		p, err := tr.NewPublisher(info, t.Name, t.Recorded.Type, t.QoS, rmw.EndpointOptions{})
		if err != nil {
			o.close()
			return nil, fmt.Errorf("publisher on %s: %w", t.Name, err)
		}
		o.pubs[t.Recorded] = p
	}
	if withClock {
		name, _ := node.ResolveTopicName(nros.DefaultClockTopic) // resolved once already
		p, err := tr.NewPublisher(info, name, clockType, nros.ClockQoS(), rmw.EndpointOptions{})
		if err != nil {
			o.close()
			return nil, fmt.Errorf("publisher on %s: %w", name, err)
		}
		o.clock = p
	}
	return o, nil
}

// playbackQoS chooses the QoS to replay a topic with from the profiles its
// publishers offered when it was recorded (rosbag2's rule: their
// reliability and durability when they all agree, the default profile
// otherwise; keep last, with the recorded depth when known).
func playbackQoS(profiles []bag.QoSProfile) rmw.QoS {
	q := nros.DefaultQoS()
	if len(profiles) == 0 {
		return q
	}
	rel, dur := profiles[0].Reliability, profiles[0].Durability
	life := profiles[0].Lifespan
	depth := 0
	for _, p := range profiles {
		if p.Reliability != rel {
			rel = ""
		}
		if p.Durability != dur {
			dur = ""
		}
		if p.Lifespan != life {
			life = 0
		}
		if p.History == "keep_last" {
			depth = max(depth, p.Depth)
		}
	}
	switch rel {
	case "best_effort":
		q.Reliability = rmw.BestEffort
	case "reliable":
		q.Reliability = rmw.Reliable
	}
	switch dur {
	case "transient_local":
		q.Durability = rmw.TransientLocal
	case "volatile":
		q.Durability = rmw.Volatile
	}
	if depth > 0 {
		q.Depth = depth
	}
	q.Lifespan = life
	return q
}
