package main

// The packages nros-go ships, linked in so that `nros topic echo` and
// `nros topic pub` know every one of their types by name.
import (
	_ "github.com/nros-go/nros/msg/action_msgs"
	_ "github.com/nros-go/nros/msg/builtin_interfaces"
	_ "github.com/nros-go/nros/msg/diagnostic_msgs"
	_ "github.com/nros-go/nros/msg/geometry_msgs"
	_ "github.com/nros-go/nros/msg/nav_msgs"
	_ "github.com/nros-go/nros/msg/nros_bench"
	_ "github.com/nros-go/nros/msg/rcl_interfaces"
	_ "github.com/nros-go/nros/msg/rmw_dds_common"
	_ "github.com/nros-go/nros/msg/rosbag2_interfaces"
	_ "github.com/nros-go/nros/msg/rosgraph_msgs"
	_ "github.com/nros-go/nros/msg/sensor_msgs"
	_ "github.com/nros-go/nros/msg/service_msgs"
	_ "github.com/nros-go/nros/msg/shape_msgs"
	_ "github.com/nros-go/nros/msg/statistics_msgs"
	_ "github.com/nros-go/nros/msg/std_msgs"
	_ "github.com/nros-go/nros/msg/std_srvs"
	_ "github.com/nros-go/nros/msg/tf2_msgs"
	_ "github.com/nros-go/nros/msg/trajectory_msgs"
	_ "github.com/nros-go/nros/msg/unique_identifier_msgs"
	_ "github.com/nros-go/nros/msg/visualization_msgs"
)
