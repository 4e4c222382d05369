package rmw

import (
	"fmt"
	"strings"
)

// ServicesDefaultQoS is rclcpp's rmw_qos_profile_services_default: reliable,
// volatile, keep last 10.
var ServicesDefaultQoS = QoS{Reliability: Reliable, Durability: Volatile, History: KeepLast, Depth: 10}

// ParametersQoS is rclcpp's parameter service profile: reliable, volatile,
// keep last 1000.
var ParametersQoS = QoS{Reliability: Reliable, Durability: Volatile, History: KeepLast, Depth: 1000}

// RequestID identifies one request of one client: the server hands it back
// with the response. Writer is the client's identity as the wire mapping
// carries it (a GUID, or Cyclone's 64-bit client id in its first 8 bytes);
// Seq is the client's sequence number of the request (from 1). Mapping and
// Origin are transport-private routing details: carry them unchanged.
type RequestID struct {
	Writer [16]byte
	Seq    int64
	// Mapping is the wire mapping the request came with (transport
	// specific; 0 for transports with a single mapping).
	Mapping uint8
	// Origin is the GUID of the endpoint that sent the request (the
	// client's request writer), when the transport knows it.
	Origin [16]byte
}

// Request is one request received by a service server.
type Request struct {
	// Data is the serialized request (encapsulation header included),
	// valid only during the callback: copy it to keep it.
	Data []byte
	// ID is what SendResponse needs to route the response.
	ID RequestID
}

// Response is one response received by a service client: only responses to
// this client's own requests are delivered.
type Response struct {
	// Data is the serialized response (encapsulation header included),
	// valid only during the callback.
	Data []byte
	// Seq is the sequence number SendRequest returned for the request.
	Seq int64
}

// ServiceTransport is the service half of a Transport: every transport
// carries ROS services.
//
// Service names are fully qualified ROS names ("/node/get_parameters");
// reqType and respType are the ROS type names of the request and response
// ("std_srvs/srv/SetBool_Request"). The callback rules of Transport apply
// to handle and deliver (they run on a transport goroutine, must not block,
// and no call starts once Close returns).
type ServiceTransport interface {
	// NewServiceServer creates a server; handle is called for every
	// request from a matched client.
	NewServiceServer(node NodeInfo, service, reqType, respType string, qos QoS, handle func(Request), opts EndpointOptions) (ServiceServer, error)
	// NewServiceClient creates a client; deliver is called for every
	// response to one of its requests. OnEvent, if set, is called with
	// EventMatched or EventUnmatched whenever ServiceAvailable may have
	// changed.
	NewServiceClient(node NodeInfo, service, reqType, respType string, qos QoS, deliver func(Response), opts EndpointOptions) (ServiceClient, error)
}

// ServiceServer answers requests.
type ServiceServer interface {
	// SendResponse sends data (encapsulation header included) as the
	// response to the request id. It may be called from any goroutine.
	SendResponse(id RequestID, data []byte) error
	// Close releases the server; once it returns no handle call is
	// running or will start.
	Close() error
}

// ServiceClient sends requests.
type ServiceClient interface {
	// SendRequest sends data (encapsulation header included) to the
	// matched servers and returns the sequence number that the response
	// will carry.
	SendRequest(data []byte) (int64, error)
	// ServiceAvailable reports whether a server is matched and ready to
	// answer.
	ServiceAvailable() bool
	// Close releases the client; once it returns no deliver or OnEvent
	// call is running or will start.
	Close() error
}

// ServiceTopics returns the DDS topic names of a service's request and
// reply ("rq/add_two_intsRequest", "rr/add_two_intsReply") for a fully
// qualified service name.
func ServiceTopics(service string) (request, reply string, err error) {
	if !strings.HasPrefix(service, "/") || len(service) < 2 {
		return "", "", fmt.Errorf("rmw: service %q is not a fully qualified name", service)
	}
	return "rq" + service + "Request", "rr" + service + "Reply", nil
}

// ServiceTypeName returns the ROS service type of a request type name:
// "std_srvs/srv/SetBool_Request" -> "std_srvs/srv/SetBool".
func ServiceTypeName(reqType string) string {
	return strings.TrimSuffix(reqType, "_Request")
}

// ServiceInfo describes one (service name, service type) pair in the ROS
// graph: the nodes of its servers and clients (an empty NodeInfo when a
// remote endpoint's node is unknown).
type ServiceInfo struct {
	Name        string // "/add_two_ints"
	Type        string // "example_interfaces/srv/AddTwoInts"
	ServerNodes []NodeInfo
	ClientNodes []NodeInfo
}

// AddServiceEndpoint adds one endpoint to a service list (for transports
// building Graph.Services answers).
func AddServiceEndpoint(list []ServiceInfo, name, typ string, node NodeInfo, server bool) []ServiceInfo {
	i := -1
	for k := range list {
		if list[k].Name == name && list[k].Type == typ {
			i = k
			break
		}
	}
	if i < 0 {
		list = append(list, ServiceInfo{Name: name, Type: typ})
		i = len(list) - 1
	}
	if server {
		list[i].ServerNodes = append(list[i].ServerNodes, node)
	} else {
		list[i].ClientNodes = append(list[i].ClientNodes, node)
	}
	return list
}

// SortServices sorts a service list by name, then type.
func SortServices(list []ServiceInfo) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && lessService(list[j], list[j-1]); j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
}

func lessService(a, b ServiceInfo) bool {
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Type < b.Type
}
