// Command listener prints every std_msgs/String it receives on /chatter,
// like the ROS 2 demo of the same name.
//
//	go run ./examples/listener [--ros-args -r chatter:=/other]
//
// It exits 0 on SIGINT/SIGTERM and 2 on a bad command line (a malformed ROS
// argument, or any argument outside --ros-args).
//
// It links no SROS2: asked for security (ROS_SECURITY_ENABLE=true) it
// refuses under ROS_SECURITY_STRATEGY=Enforce and runs unsecured under
// Permissive. A secured node imports package sros2, as examples/talker does.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_msgs"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, nros.DefaultContext(), os.Args[1:], os.Stderr))
}

func run(ctx context.Context, rctx *nros.Context, args []string, stderr io.Writer) int {
	rest, err := rctx.Init(args)
	if err != nil {
		fmt.Fprintln(stderr, "listener:", err)
		return 2
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "listener: unknown argument %q: listener takes only ROS arguments (--ros-args -r chatter:=/other ...)\n", rest[0])
		return 2
	}
	node, err := nros.NewNode("listener", nros.WithContext(rctx))
	if err != nil {
		fmt.Fprintln(stderr, "listener:", err)
		return 2
	}
	defer node.Close()
	if _, err := nros.NewSubscription[std_msgs.String](node, "chatter", nros.DefaultQoS(), func(m *std_msgs.String) {
		node.Logger().Info("I heard: [" + m.Data + "]")
	}); err != nil {
		fmt.Fprintln(stderr, "listener:", err)
		return 1
	}
	exec := nros.NewExecutor(nros.WithExecutorContext(rctx))
	if err := exec.AddNode(node); err != nil {
		fmt.Fprintln(stderr, "listener:", err)
		return 1
	}
	if err := exec.Spin(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(stderr, "listener:", err)
		return 1
	}
	return 0
}
