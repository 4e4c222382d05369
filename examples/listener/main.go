// Command listener prints every std_msgs/String it receives on /chatter,
// like the ROS 2 demo of the same name.
//
//	go run ./examples/listener [--ros-args -r chatter:=/other]
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_msgs"
)

func main() {
	if _, err := nros.Init(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "listener:", err)
		os.Exit(2)
	}
	node, err := nros.NewNode("listener")
	if err != nil {
		fmt.Fprintln(os.Stderr, "listener:", err)
		os.Exit(2)
	}
	defer node.Close()
	if _, err := nros.NewSubscription[std_msgs.String](node, "chatter", nros.DefaultQoS(), func(m *std_msgs.String) {
		node.Logger().Info("I heard: [" + m.Data + "]")
	}); err != nil {
		fmt.Fprintln(os.Stderr, "listener:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exec := nros.NewExecutor()
	exec.AddNode(node)
	exec.Spin(ctx)
}
