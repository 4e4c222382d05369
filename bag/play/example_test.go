package play_test

import (
	"context"
	"fmt"
	"log"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag"
	"github.com/nros-go/nros/bag/play"
	"github.com/nros-go/nros/msg/std_msgs"
	"github.com/nros-go/nros/rmw/intra"
)

// Play a recorded talker into a graph (here an in-process one) at 100
// times the recorded pace, while a listener hears it.
func Example() {
	tr := intra.New()
	defer tr.Close()
	ctx := nros.NewContext(nros.WithTransport(tr))
	defer ctx.Shutdown()

	heard := make(chan string, 10)
	listener, err := nros.NewNode("listener", nros.WithContext(ctx))
	if err != nil {
		log.Fatal(err)
	}
	defer listener.Close()
	if _, err := nros.NewSubscription(listener, "/topic", nros.DefaultQoS(), func(m *std_msgs.String) { heard <- m.Data }); err != nil {
		log.Fatal(err)
	}
	exec := nros.NewExecutor(nros.WithExecutorContext(ctx))
	defer exec.Close()
	exec.AddNode(listener)
	spin, stop := context.WithCancel(context.Background())
	defer stop()
	go exec.Spin(spin)

	b, err := bag.Open("../../testdata/bags/talker_mcap")
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	node, err := nros.NewNode("rosbag2_player", nros.WithContext(ctx))
	if err != nil {
		log.Fatal(err)
	}
	defer node.Close()
	p, err := play.New(node, b, play.Options{Rate: 100, Topics: []string{"/topic"}})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	for _, t := range p.Topics() {
		fmt.Println("playing", t.Name, t.Recorded.Type)
	}
	if err := p.Run(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("published", p.Status().Published)
	fmt.Println("first heard:", <-heard)
	// Output:
	// playing /topic std_msgs/msg/String
	// published 10
	// first heard: Hello, world! 0
}
