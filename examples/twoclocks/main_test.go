package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/rmw/intra"
)

// Two worlds at 1x and 3x for 2 s of wall time: their 10 Hz ROS timers
// fire 20 and 60 times. A jump in one is not seen by the other.
func TestTwoClocksDivergeAndJumpAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := intra.New()
		defer tr.Close()
		a, err := newSimulation(tr, "a", 1, 100*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		b, err := newSimulation(tr, "b", 3, 100*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		a.Start()
		b.Start()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if na, nb := a.Activations(), b.Activations(); na != 20 || nb != 60 {
			t.Fatalf("after 2 s of wall time: %d and %d activations, want 20 and 60", na, nb)
		}
		if ta, tb := a.Node.Clock().Now().Nanoseconds(), b.Node.Clock().Now().Nanoseconds(); ta != 102e9 || tb != 106e9 {
			t.Fatalf("ROS times %d and %d, want 102 s and 106 s", ta, tb)
		}

		// Waits on both clocks, then world a loops back 5 s.
		aCtx, aCancel := nros.WithRosTimeout(context.Background(), a.Node.Clock(), nros.Duration(10*time.Second))
		defer aCancel()
		bCtx, bCancel := nros.WithRosTimeout(context.Background(), b.Node.Clock(), nros.Duration(10*time.Second))
		defer bCancel()
		a.Jump(-5 * time.Second)
		time.Sleep(time.Second)
		synctest.Wait()
		if !errors.Is(context.Cause(aCtx), nros.ErrTimeSourceChanged) {
			t.Fatalf("world a's wait: %v, want ErrTimeSourceChanged", context.Cause(aCtx))
		}
		if bCtx.Err() != nil {
			t.Fatalf("world b's wait ended on world a's jump: %v", context.Cause(bCtx))
		}
		if tb := b.Node.Clock().Now().Nanoseconds(); tb != 109e9 {
			t.Fatalf("world b reads %d after 3 s, want 109 s: it must not see a's jump", tb)
		}
		if ta := a.Node.Clock().Now().Nanoseconds(); ta != 98e9 {
			t.Fatalf("world a reads %d, want 98 s (103 - 5)", ta)
		}
		// World a restarted its period at the landing point (97.01 s):
		// 97.11 ... 97.91 is 9 more; world b kept its grid: 30 more.
		if na, nb := a.Activations(), b.Activations(); na != 29 || nb != 90 {
			t.Fatalf("after the jump: %d and %d activations, want 29 and 90", na, nb)
		}
	})
}

func TestRunPrintsTheCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out bytes.Buffer
		if err := run(context.Background(), 2*time.Second+time.Millisecond, &out); err != nil {
			t.Fatal(err)
		}
		want := "sim1x: 20 activations, ROS time 102.000000000\nsim3x: 60 activations, ROS time 106.000000000\n"
		if got := out.String(); got != want {
			t.Fatalf("output:\n%s\nwant:\n%s", got, want)
		}
	})
}
