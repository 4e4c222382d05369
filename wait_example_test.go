package nros_test

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nros-go/nros"
)

// SleepUntil on a ROS clock returns when the time source installs a sample
// at or past the deadline, however long that takes in real time. Here a
// goroutine stands in for the /clock subscription, stepping simulated time
// by 100 ms; a WithRosDeadline context shows what a bag loop does to a wait.
func ExampleClock_SleepUntil() {
	ctx := nros.NewContext(nros.WithLogOutput(io.Discard))
	clk := ctx.Clock()
	src := ctx.AttachTimeSource()
	src.Install(nros.TimeFromNanoseconds(100e9)) // simulated time starts at 100 s

	go func() { // the simulator
		for ns := int64(100e9); ns <= 102e9; ns += 100e6 {
			src.Install(nros.TimeFromNanoseconds(ns))
		}
	}()
	err := clk.SleepUntil(context.Background(), nros.TimeFromNanoseconds(102e9))
	fmt.Println("woke at", clk.Now(), "err:", err)

	// A wait that the bag loops under (back to 95 s, before the wait began)
	// ends with ErrTimeSourceChanged rather than waiting for 105 s again.
	wctx, cancel := nros.WithRosDeadline(context.Background(), clk, nros.TimeFromNanoseconds(105e9))
	defer cancel()
	src.Install(nros.TimeFromNanoseconds(95e9))
	<-wctx.Done()
	fmt.Println("loop:", errors.Is(context.Cause(wctx), nros.ErrTimeSourceChanged))
	// Output:
	// woke at 102.000000000 err: <nil>
	// loop: true
}
