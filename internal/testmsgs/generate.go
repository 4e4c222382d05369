// Package testmsgs holds Go packages generated from ROS 2's test interface
// definitions (internal/gen/testdata/interfaces), for nros-go's own tests:
// test_msgs and example_interfaces are packages the bags of
// ../shared/testdata/bags use.
package testmsgs

//go:generate go run ../gen/cmd/nrosgen -o . ../gen/testdata/interfaces
