// Package play plays a rosbag2 bag into a running ROS graph, as
// `ros2 bag play` does: the Player that `nros bag play` wraps, for programs
// and tests.
//
// A Player publishes every recorded topic from a node, with the QoS the
// recorded publishers offered and the recorded bytes as they are (so
// messages of any type play, generated in Go or not), at the recorded pace
// times a rate. It can publish /clock from bag time (rosbag2's --clock),
// loop (bag time, and /clock with it, jumps back to the start on each
// pass), start paused, skip the start of the bag, wait before starting,
// choose and rename topics, and be paused, resumed, slowed down, stepped
// message by message and seeked while it plays, from any goroutine.
//
// Time comes from a Clock and from nowhere else, so playback is
// deterministic under a clock that a test owns: a testing/synctest bubble
// (the default clock runs on the time package), or a simtest.Sim, whose
// steps of wall time call PlayDue (see simtest.Sim.Play). The scheduler is
// a function of the playback state and the time alone.
//
// The package lives apart from package bag so that reading and writing
// bags does not link the nros runtime; package nros does not import
// either.
package play
