package main

import (
	"context"
	"errors"
	"time"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg/rosbag2_interfaces"
)

// playerServices serves rosbag2's player services on the player's node
// (~/pause, ~/resume, ~/toggle_paused, ~/is_paused, ~/set_rate, ~/get_rate,
// ~/play_next, ~/seek): each request becomes a playerRequest that the
// player applies between messages. It returns the request channel to give
// the player, and a function that stops the services' executor.
func playerServices(ctx context.Context, c *nros.Context, node *nros.Node) (<-chan playerRequest, func(), error) {
	reqs := make(chan playerRequest)
	ask := func(ctx context.Context, r playerRequest) (playerReply, error) {
		r.reply = make(chan playerReply, 1)
		select {
		case reqs <- r:
		case <-ctx.Done():
			return playerReply{}, ctx.Err()
		case <-time.After(5 * time.Second):
			return playerReply{}, errors.New("the player did not take the request")
		}
		return <-r.reply, nil
	}
	var err error
	add := func(e error) {
		if err == nil {
			err = e
		}
	}
	_, e := nros.NewService[rosbag2_interfaces.Pause_Request, rosbag2_interfaces.Pause_Response](node, "~/pause",
		func(ctx context.Context, _ *rosbag2_interfaces.Pause_Request) (*rosbag2_interfaces.Pause_Response, error) {
			_, err := ask(ctx, playerRequest{kind: cmdPause})
			return &rosbag2_interfaces.Pause_Response{}, err
		})
	add(e)
	_, e = nros.NewService[rosbag2_interfaces.Resume_Request, rosbag2_interfaces.Resume_Response](node, "~/resume",
		func(ctx context.Context, _ *rosbag2_interfaces.Resume_Request) (*rosbag2_interfaces.Resume_Response, error) {
			_, err := ask(ctx, playerRequest{kind: cmdResume})
			return &rosbag2_interfaces.Resume_Response{}, err
		})
	add(e)
	_, e = nros.NewService[rosbag2_interfaces.TogglePaused_Request, rosbag2_interfaces.TogglePaused_Response](node, "~/toggle_paused",
		func(ctx context.Context, _ *rosbag2_interfaces.TogglePaused_Request) (*rosbag2_interfaces.TogglePaused_Response, error) {
			_, err := ask(ctx, playerRequest{kind: cmdTogglePause})
			return &rosbag2_interfaces.TogglePaused_Response{}, err
		})
	add(e)
	_, e = nros.NewService[rosbag2_interfaces.IsPaused_Request, rosbag2_interfaces.IsPaused_Response](node, "~/is_paused",
		func(ctx context.Context, _ *rosbag2_interfaces.IsPaused_Request) (*rosbag2_interfaces.IsPaused_Response, error) {
			rep, err := ask(ctx, playerRequest{kind: cmdIsPaused})
			return &rosbag2_interfaces.IsPaused_Response{Paused: rep.paused}, err
		})
	add(e)
	_, e = nros.NewService[rosbag2_interfaces.SetRate_Request, rosbag2_interfaces.SetRate_Response](node, "~/set_rate",
		func(ctx context.Context, req *rosbag2_interfaces.SetRate_Request) (*rosbag2_interfaces.SetRate_Response, error) {
			rep, err := ask(ctx, playerRequest{kind: cmdSetRate, rate: req.Rate})
			return &rosbag2_interfaces.SetRate_Response{Success: rep.ok}, err
		})
	add(e)
	_, e = nros.NewService[rosbag2_interfaces.GetRate_Request, rosbag2_interfaces.GetRate_Response](node, "~/get_rate",
		func(ctx context.Context, _ *rosbag2_interfaces.GetRate_Request) (*rosbag2_interfaces.GetRate_Response, error) {
			rep, err := ask(ctx, playerRequest{kind: cmdGetRate})
			return &rosbag2_interfaces.GetRate_Response{Rate: rep.rate}, err
		})
	add(e)
	_, e = nros.NewService[rosbag2_interfaces.PlayNext_Request, rosbag2_interfaces.PlayNext_Response](node, "~/play_next",
		func(ctx context.Context, _ *rosbag2_interfaces.PlayNext_Request) (*rosbag2_interfaces.PlayNext_Response, error) {
			rep, err := ask(ctx, playerRequest{kind: cmdPlayNext})
			return &rosbag2_interfaces.PlayNext_Response{Success: rep.ok}, err
		})
	add(e)
	_, e = nros.NewService[rosbag2_interfaces.Seek_Request, rosbag2_interfaces.Seek_Response](node, "~/seek",
		func(ctx context.Context, req *rosbag2_interfaces.Seek_Request) (*rosbag2_interfaces.Seek_Response, error) {
			t := nros.NewTime(req.Time.Sec, req.Time.Nanosec).Nanoseconds()
			rep, err := ask(ctx, playerRequest{kind: cmdSeek, seek: t})
			return &rosbag2_interfaces.Seek_Response{Success: rep.ok}, err
		})
	add(e)
	if err != nil {
		return nil, nil, err
	}
	exec := nros.NewExecutor(nros.WithExecutorContext(c))
	if err := exec.AddNode(node); err != nil {
		return nil, nil, err
	}
	spinCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		exec.Spin(spinCtx)
	}()
	return reqs, func() {
		cancel()
		<-done
		exec.Close()
	}, nil
}
