// Package gen turns ROS 2 interface files into Go packages: one package per
// ROS package, a struct per message, the Request and Response of each
// service (Name_Request, Name_Response), and for each action its Goal,
// Result and Feedback and the wrappers ROS 2 builds from them
// (Name_SendGoal_Request/_Response, Name_GetResult_Request/_Response,
// Name_FeedbackMessage). Every struct implements msg.Message with XCDR1
// encoding and decoding, and carries its RIHS01 type hash (TypeHash; the
// parts of a service also the service's, ServiceTypeHash) and, for a .msg
// message, its definition as rosbag2 stores it (MessageDefinition), all
// computed here, so that programs need neither the definitions nor the
// parser at run time. The command is `nros gen`; the definitions come from
// internal/interfaces.
package gen
