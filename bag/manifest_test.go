package bag

// Figures of the shared test bags, as testdata/bags' source MANIFEST.md
// gives them (counted from the messages themselves by an independent
// reader). Topics are in the order the MANIFEST lists them.

type manifestTopic struct {
	name, typ   string
	count       uint64
	first, last int64
}

type manifestBag struct {
	dir         string
	count       uint64
	first, last int64
	topics      []manifestTopic
}

var manifest = []manifestBag{
	{"walker_galactic_clock_sqlite3", 10078, 1670475163372090460, 1670475192962551169, []manifestTopic{
		{"/rosout", "rcl_interfaces/msg/Log", 44, 1670475163372090460, 1670475165525928930},
		{"/tf_static", "tf2_msgs/msg/TFMessage", 3, 1670475163372104851, 1670475163380470309},
		{"/robot_description", "std_msgs/msg/String", 3, 1670475163372116926, 1670475163380561916},
		{"/parameter_events", "rcl_interfaces/msg/ParameterEvent", 55, 1670475164691971947, 1670475165470403379},
		{"/joint_states", "sensor_msgs/msg/JointState", 766, 1670475165524897730, 1670475192932844368},
		{"/tf", "tf2_msgs/msg/TFMessage", 2248, 1670475165524237567, 1670475192932946006},
		{"/clock", "rosgraph_msgs/msg/Clock", 277, 1670475164280882039, 1670475192940216666},
		{"/cmd_vel", "geometry_msgs/msg/Twist", 592, 1670475163427902751, 1670475192960909446},
		{"/performance_metrics", "gazebo_msgs/msg/PerformanceMetrics", 137, 1670475164281817052, 1670475192801632470},
		{"/scan", "sensor_msgs/msg/LaserScan", 0, 0, 0},
		{"/imu", "sensor_msgs/msg/Imu", 5187, 1670475165479637992, 1670475192962551169},
		{"/odom", "nav_msgs/msg/Odometry", 766, 1670475165523900890, 1670475192932868511},
	}},
	{"talker_sqlite3", 20, 1585866235112411371, 1585866239643508139, []manifestTopic{
		{"/rosout", "rcl_interfaces/msg/Log", 10, 1585866235112411371, 1585866239612761798},
		{"/parameter_events", "rcl_interfaces/msg/ParameterEvent", 0, 0, 0},
		{"/topic", "std_msgs/msg/String", 10, 1585866235112609068, 1585866239643508139},
	}},
	{"talker_mcap", 20, 1585866235112411371, 1585866239643508139, []manifestTopic{
		{"/rosout", "rcl_interfaces/msg/Log", 10, 1585866235112411371, 1585866239612761798},
		{"/topic", "std_msgs/msg/String", 10, 1585866235112609068, 1585866239643508139},
		{"/parameter_events", "rcl_interfaces/msg/ParameterEvent", 0, 0, 0},
	}},
	{"wbag_split_sqlite3", 6074, 1000, 2998, []manifestTopic{
		{"AAA", "std_msgs/msg/String", 804, 1001, 2997},
		{"BBB", "std_msgs/msg/String", 742, 1004, 2992},
		{"CCC", "std_msgs/msg/String", 742, 1002, 2997},
		{"DDD", "std_msgs/msg/String", 753, 1006, 2998},
		{"EEE", "std_msgs/msg/String", 804, 1000, 2993},
		{"FFF", "std_msgs/msg/String", 772, 1000, 2998},
		{"GGG", "std_msgs/msg/String", 731, 1001, 2985},
		{"HHH", "std_msgs/msg/String", 726, 1008, 2994},
	}},
	{"cdr_test_iron_sqlite3", 7, 1586406456763032325, 1586406456914169506, []manifestTopic{
		{"/test_topic", "test_msgs/msg/BasicTypes", 3, 1586406456763032325, 1586406456863382628},
		{"/array_topic", "test_msgs/msg/Arrays", 4, 1586406456782683500, 1586406456914169506},
	}},
	{"cdr_test_iron_mcap", 7, 1586406456763032325, 1586406456914169506, []manifestTopic{
		{"/test_topic", "test_msgs/msg/BasicTypes", 3, 1586406456763032325, 1586406456863382628},
		{"/array_topic", "test_msgs/msg/Arrays", 4, 1586406456782683500, 1586406456914169506},
	}},
	{"service_events_jazzy_mcap", 10, 1699345836270074454, 1699345836340728398, []manifestTopic{
		{"/test_service1/_service_event", "test_msgs/srv/BasicTypes_Event", 4, 1699345836270074454, 1699345836280381185},
		{"/test_service2/_service_event", "test_msgs/srv/BasicTypes_Event", 4, 1699345836270157074, 1699345836280421434},
		{"/test_topic1", "test_msgs/msg/Strings", 1, 1699345836290532362, 1699345836290532362},
		{"/test_topic2", "test_msgs/msg/Strings", 1, 1699345836340728398, 1699345836340728398},
		{"/events/write_split", "rosbag2_interfaces/msg/WriteSplitEvent", 0, 0, 0},
	}},
	{"rewriter_b_mcap", 75, 0, 222000000, []manifestTopic{
		{"a_empty", "test_msgs/msg/Empty", 25, 0, 216000000},
		{"c_strings", "test_msgs/msg/Strings", 50, 3000000, 222000000},
	}},
	{"empty_bag_sqlite3", 0, 0, 0, []manifestTopic{
		{"/rosout", "rcl_interfaces/msg/Log", 0, 0, 0},
		{"/parameter_events", "rcl_interfaces/msg/ParameterEvent", 0, 0, 0},
	}},
	{"topics_and_services_bare_sqlite3", 13, 1697522387465250790, 1697522388973342699, []manifestTopic{
		{"/parameter_events", "rcl_interfaces/msg/ParameterEvent", 7, 1697522387465250790, 1697522387471864847},
		{"/events/write_split", "rosbag2_interfaces/msg/WriteSplitEvent", 0, 0, 0},
		{"/add_two_ints2/_service_event", "example_interfaces/srv/AddTwoInts_Event", 0, 0, 0},
		{"/add_two_ints/_service_event", "example_interfaces/srv/AddTwoInts_Event", 6, 1697522387973160348, 1697522388973342699},
		{"/rosout", "rcl_interfaces/msg/Log", 0, 0, 0},
	}},
	{"topics_and_services_bare_mcap", 13, 1697522263121459207, 1697522264629347866, []manifestTopic{
		{"/parameter_events", "rcl_interfaces/msg/ParameterEvent", 7, 1697522263121459207, 1697522263128059018},
		{"/add_two_ints/_service_event", "example_interfaces/srv/AddTwoInts_Event", 6, 1697522263629245968, 1697522264629347866},
		{"/rosout", "rcl_interfaces/msg/Log", 0, 0, 0},
		{"/events/write_split", "rosbag2_interfaces/msg/WriteSplitEvent", 0, 0, 0},
		{"/add_two_ints2/_service_event", "example_interfaces/srv/AddTwoInts_Event", 0, 0, 0},
	}},
}
