// Command talker publishes std_msgs/String "Hello World: <n>" on /chatter
// once a second (a wall timer), like the ROS 2 demo of the same name.
//
//	go run ./examples/talker [--ros-args -p period_ms:=1000 -r chatter:=/other]
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_msgs"
)

func main() {
	if _, err := nros.Init(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "talker:", err)
		os.Exit(2)
	}
	node, err := nros.NewNode("talker")
	if err != nil {
		fmt.Fprintln(os.Stderr, "talker:", err)
		os.Exit(2)
	}
	defer node.Close()
	pv, err := node.DeclareParameter("period_ms", nros.IntegerValue(1000))
	if err != nil {
		fmt.Fprintln(os.Stderr, "talker:", err)
		os.Exit(2)
	}
	ms, _ := pv.Integer()
	pub, err := nros.NewPublisher[std_msgs.String](node, "chatter", nros.DefaultQoS())
	if err != nil {
		fmt.Fprintln(os.Stderr, "talker:", err)
		os.Exit(1)
	}
	count := 0
	if _, err := node.CreateWallTimer(time.Duration(ms)*time.Millisecond, func() {
		count++
		m := std_msgs.String{Data: fmt.Sprintf("Hello World: %d", count)}
		node.Logger().Info("Publishing: '" + m.Data + "'")
		pub.Publish(&m)
	}); err != nil {
		fmt.Fprintln(os.Stderr, "talker:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	exec := nros.NewExecutor()
	exec.AddNode(node)
	exec.Spin(ctx)
}
