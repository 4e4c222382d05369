package nros_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/std_srvs"
	"github.com/nros-go/nros/rmw/intra"
)

// A service answered on the executor goroutine and a client calling it with
// a deadline.
func ExampleNewService() {
	ctx := nros.NewContext(nros.WithTransport(intra.New()), nros.WithLogOutput(io.Discard))
	defer ctx.Shutdown()
	node, _ := nros.NewNode("motor", nros.WithContext(ctx))
	defer node.Close()

	enabled := false
	_, err := nros.NewService[std_srvs.SetBool_Request, std_srvs.SetBool_Response](node, "~/enable",
		func(_ context.Context, req *std_srvs.SetBool_Request) (*std_srvs.SetBool_Response, error) {
			enabled = req.Data // the executor goroutine: no lock needed
			return &std_srvs.SetBool_Response{Success: true, Message: fmt.Sprint("enabled=", enabled)}, nil
		})
	if err != nil {
		panic(err)
	}
	exec := nros.NewExecutor(nros.WithExecutorContext(ctx))
	defer exec.Close()
	exec.AddNode(node)
	spin, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); exec.Spin(spin) }()
	defer func() { stop(); <-done }()

	client, _ := nros.NewClient[std_srvs.SetBool_Request, std_srvs.SetBool_Response](node, "/motor/enable")
	call, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := client.Call(call, &std_srvs.SetBool_Request{Data: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Success, resp.Message)
	// Output: true enabled=true
}
