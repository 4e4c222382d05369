// Command talker publishes std_msgs/String "Hello World: <n>" on /chatter
// once a second (a wall timer), like the ROS 2 demo of the same name.
//
//	go run ./examples/talker [--ros-args -p period_ms:=1000 -r chatter:=/other]
//
// It exits 0 on SIGINT/SIGTERM and 2 on a bad command line (a malformed ROS
// argument, period_ms out of range, or any argument outside --ros-args).
package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_msgs"
	_ "github.com/nros-go/nros/sros2" // SROS2 when ROS_SECURITY_ENABLE=true (README, Security)
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, nros.DefaultContext(), os.Args[1:], os.Stderr))
}

func run(ctx context.Context, rctx *nros.Context, args []string, stderr io.Writer) int {
	rest, err := rctx.Init(args)
	if err != nil {
		fmt.Fprintln(stderr, "talker:", err)
		return 2
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "talker: unknown argument %q: talker takes only ROS arguments (--ros-args -p period_ms:=500 ...)\n", rest[0])
		return 2
	}
	node, err := nros.NewNode("talker", nros.WithContext(rctx))
	if err != nil {
		fmt.Fprintln(stderr, "talker:", err)
		return 2
	}
	defer node.Close()
	period, err := millis(node, "period_ms", 1000)
	if err != nil {
		fmt.Fprintln(stderr, "talker:", err)
		return 2
	}
	pub, err := nros.NewPublisher[std_msgs.String](node, "chatter", nros.DefaultQoS())
	if err != nil {
		fmt.Fprintln(stderr, "talker:", err)
		return 1
	}
	count := 0
	if _, err := node.CreateWallTimer(period, func() {
		count++
		m := std_msgs.String{Data: fmt.Sprintf("Hello World: %d", count)}
		node.Logger().Info("Publishing: '" + m.Data + "'")
		if err := pub.Publish(&m); err != nil {
			node.Logger().Error("publish failed", "err", err)
		}
	}); err != nil {
		fmt.Fprintln(stderr, "talker:", err)
		return 1
	}
	exec := nros.NewExecutor(nros.WithExecutorContext(rctx))
	if err := exec.AddNode(node); err != nil {
		fmt.Fprintln(stderr, "talker:", err)
		return 1
	}
	if err := exec.Spin(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(stderr, "talker:", err)
		return 1
	}
	return 0
}

// millis declares an integer parameter in milliseconds and converts it to
// a time.Duration safely: time.Duration(ms)*time.Millisecond would wrap
// silently for ms above math.MaxInt64/1e6 (about 292 years).
func millis(n *nros.Node, name string, def int64) (time.Duration, error) {
	v, err := n.DeclareParameter(name, nros.IntegerValue(def))
	if err != nil {
		return 0, err
	}
	ms, _ := v.Integer()
	const maxMs = int64(math.MaxInt64 / time.Millisecond)
	if ms <= 0 || ms > maxMs {
		return 0, fmt.Errorf("parameter %s must be 1 to %d (milliseconds), got %d", name, maxMs, ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
