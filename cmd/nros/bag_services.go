package main

import (
	"context"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/bag/play"
	"github.com/nros-go/nros/msg/rosbag2_interfaces"
)

// playerServices serves rosbag2's player services on the player's node
// (~/pause, ~/resume, ~/toggle_paused, ~/is_paused, ~/set_rate, ~/get_rate,
// ~/play_next, ~/seek), each a call of the Player's control of that name,
// on an executor of their own. It returns a function that stops it.
func playerServices(ctx context.Context, c *nros.Context, node *nros.Node, p *play.Player) (func(), error) {
	var err error
	add := func(_ any, e error) {
		if err == nil {
			err = e
		}
	}
	add(nros.NewService[rosbag2_interfaces.Pause_Request, rosbag2_interfaces.Pause_Response](node, "~/pause",
		func(context.Context, *rosbag2_interfaces.Pause_Request) (*rosbag2_interfaces.Pause_Response, error) {
			p.Pause()
			return &rosbag2_interfaces.Pause_Response{}, nil
		}))
	add(nros.NewService[rosbag2_interfaces.Resume_Request, rosbag2_interfaces.Resume_Response](node, "~/resume",
		func(context.Context, *rosbag2_interfaces.Resume_Request) (*rosbag2_interfaces.Resume_Response, error) {
			p.Resume()
			return &rosbag2_interfaces.Resume_Response{}, nil
		}))
	add(nros.NewService[rosbag2_interfaces.TogglePaused_Request, rosbag2_interfaces.TogglePaused_Response](node, "~/toggle_paused",
		func(context.Context, *rosbag2_interfaces.TogglePaused_Request) (*rosbag2_interfaces.TogglePaused_Response, error) {
			p.TogglePaused()
			return &rosbag2_interfaces.TogglePaused_Response{}, nil
		}))
	add(nros.NewService[rosbag2_interfaces.IsPaused_Request, rosbag2_interfaces.IsPaused_Response](node, "~/is_paused",
		func(context.Context, *rosbag2_interfaces.IsPaused_Request) (*rosbag2_interfaces.IsPaused_Response, error) {
			return &rosbag2_interfaces.IsPaused_Response{Paused: p.IsPaused()}, nil
		}))
	add(nros.NewService[rosbag2_interfaces.SetRate_Request, rosbag2_interfaces.SetRate_Response](node, "~/set_rate",
		func(_ context.Context, req *rosbag2_interfaces.SetRate_Request) (*rosbag2_interfaces.SetRate_Response, error) {
			return &rosbag2_interfaces.SetRate_Response{Success: p.SetRate(req.Rate)}, nil
		}))
	add(nros.NewService[rosbag2_interfaces.GetRate_Request, rosbag2_interfaces.GetRate_Response](node, "~/get_rate",
		func(context.Context, *rosbag2_interfaces.GetRate_Request) (*rosbag2_interfaces.GetRate_Response, error) {
			return &rosbag2_interfaces.GetRate_Response{Rate: p.Rate()}, nil
		}))
	add(nros.NewService[rosbag2_interfaces.PlayNext_Request, rosbag2_interfaces.PlayNext_Response](node, "~/play_next",
		func(context.Context, *rosbag2_interfaces.PlayNext_Request) (*rosbag2_interfaces.PlayNext_Response, error) {
			return &rosbag2_interfaces.PlayNext_Response{Success: p.PlayNext()}, nil
		}))
	add(nros.NewService[rosbag2_interfaces.Seek_Request, rosbag2_interfaces.Seek_Response](node, "~/seek",
		func(_ context.Context, req *rosbag2_interfaces.Seek_Request) (*rosbag2_interfaces.Seek_Response, error) {
			t := nros.NewTime(req.Time.Sec, req.Time.Nanosec).Nanoseconds()
			return &rosbag2_interfaces.Seek_Response{Success: p.SeekTo(t)}, nil
		}))
	if err != nil {
		return nil, err
	}
	exec := nros.NewExecutor(nros.WithExecutorContext(c))
	if err := exec.AddNode(node); err != nil {
		return nil, err
	}
	spinCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		exec.Spin(spinCtx)
	}()
	return func() {
		cancel()
		<-done
		exec.Close()
	}, nil
}
