package ros

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nros-go/nros/rmw"
)

// AdminSpace is the first chunk of every rmw_zenoh liveliness token.
const AdminSpace = "@ros2_lv"

// Kind is the kind of a graph entity, as its token names it.
type Kind uint8

// The entity kinds.
const (
	KindNode         Kind = iota + 1 // "NN"
	KindPublisher                    // "MP"
	KindSubscription                 // "MS"
	KindService                      // "SS": a service server
	KindClient                       // "SC": a service client
)

var kindStr = [...]string{KindNode: "NN", KindPublisher: "MP", KindSubscription: "MS", KindService: "SS", KindClient: "SC"}

// String returns the token's two letters ("NN", "MP", "MS", "SS", "SC"), or
// "Kind(n)".
func (k Kind) String() string {
	if int(k) < len(kindStr) && kindStr[k] != "" {
		return kindStr[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

func kindOf(s string) (Kind, bool) {
	for k, v := range kindStr {
		if v != "" && v == s {
			return Kind(k), true
		}
	}
	return 0, false
}

// Entity is one node or endpoint of the ROS graph as an rmw_zenoh
// liveliness token describes it:
//
//	@ros2_lv/<domain>/<zid>/<nid>/<id>/NN/<enclave>/<ns>/<node>
//	@ros2_lv/<domain>/<zid>/<nid>/<id>/<MP|MS|SS|SC>/<enclave>/<ns>/<node>/<topic>/<type>/<hash>/<qos>[/<backends>]
//
// Names are held as ROS names ("/", "/chatter"); Token mangles them.
type Entity struct {
	Domain uint32
	// ZID is the session's zenoh id as zenoh prints it (FormatZID).
	ZID string
	// NodeID is the id of the node within the session's context and ID the
	// entity's own id (equal to NodeID for a node). rmw_zenoh draws both
	// from one counter per context, from 0, in decimal.
	NodeID, ID string
	Kind       Kind
	// Enclave, Namespace and Node name the node: "/" , "/" or "/ns",
	// "talker".
	Enclave, Namespace, Node string
	// Topic is the topic or service name ("/chatter"), Type its DDS type
	// name ("std_msgs::msg::dds_::String_"), TypeHash "RIHS01_…" or
	// TypeHashNotSupported, QoS the endpoint's profile. Not for nodes.
	Topic, Type, TypeHash string
	QoS                   Profile
	// Backends is the optional last chunk of buffer-aware endpoints
	// (rmw_zenoh 0.10 and later: "backends:cpu:;cuda:…"), kept verbatim; ""
	// when absent.
	Backends string
}

// NodeEntity returns the entity of a node: its token is what rmw_zenoh
// declares when the node is created (nid == id). An empty enclave is "/",
// as rcl gives it.
func NodeEntity(domain uint32, zid string, nodeID uint64, node rmw.NodeInfo) Entity {
	id := strconv.FormatUint(nodeID, 10)
	return Entity{Domain: domain, ZID: zid, NodeID: id, ID: id, Kind: KindNode,
		Enclave: orSlash(node.Enclave), Namespace: orSlash(node.Namespace), Node: node.Name}
}

// EndpointEntity returns the entity of a publisher, subscription, service
// server or client of the node made by NodeEntity(…, nodeID, node): topic is
// the fully qualified name, ddsType the DDS type name (DDSTypeName),
// typeHash the field Distro.TypeHash gives, qos the adapted profile
// (ProfileFromQoS).
func EndpointEntity(node Entity, kind Kind, entityID uint64, topic, ddsType, typeHash string, qos Profile) Entity {
	e := node
	e.Kind = kind
	e.ID = strconv.FormatUint(entityID, 10)
	e.Topic, e.Type, e.TypeHash, e.QoS = topic, ddsType, typeHash, qos
	return e
}

func orSlash(s string) string {
	if s == "" {
		return "/"
	}
	return s
}

// ErrToken is wrapped by every error of ParseToken and Token.
var ErrToken = errors.New("ros: bad liveliness token")

// Token returns the entity's liveliness token as rmw_zenoh builds it:
// every field mangled ('/' -> '%'), fields joined by '/'. It fails on an
// entity rmw_zenoh could not declare: an empty field, a character zenoh
// does not allow in a key expression ('*', '$', '#', '?'), an unknown kind.
func (e *Entity) Token() (string, error) {
	if _, ok := kindOf(e.Kind.String()); !ok {
		return "", fmt.Errorf("%w: kind %v", ErrToken, e.Kind)
	}
	var b strings.Builder
	b.Grow(256)
	b.WriteString(AdminSpace)
	add := func(what, v string) error {
		if err := checkChunk(v, what); err != nil {
			return fmt.Errorf("%w: %v", ErrToken, err)
		}
		b.WriteByte('/')
		b.WriteString(v)
		return nil
	}
	fields := [][2]string{
		{"domain", strconv.FormatUint(uint64(e.Domain), 10)},
		{"zid", e.ZID}, {"node id", e.NodeID}, {"entity id", e.ID}, {"kind", e.Kind.String()},
		{"enclave", Mangle(e.Enclave)}, {"namespace", Mangle(e.Namespace)}, {"node name", Mangle(e.Node)},
	}
	if e.Kind != KindNode {
		fields = append(fields, [][2]string{
			{"topic", Mangle(e.Topic)}, {"type", Mangle(e.Type)}, {"type hash", Mangle(e.TypeHash)},
			{"qos", e.QoS.String()},
		}...)
		if e.Backends != "" {
			fields = append(fields, [2]string{"backends", e.Backends})
		}
	}
	for _, f := range fields {
		if err := add(f[0], f[1]); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// GID returns the entity's gid as rmw_zenoh computes it: XXH3-128 of its
// token, the low 64 bits then the high 64 bits, each little endian. For
// an entity parsed from a peer's token it is the gid that peer uses
// (rmw_zenoh also hashes the token it rebuilds from the parsed fields).
func (e *Entity) GID() ([16]byte, error) {
	tok, err := e.Token()
	if err != nil {
		return [16]byte{}, err
	}
	return TokenGID(tok), nil
}

// TokenGID returns XXH3-128 of a token string as a 16-byte gid (low64 then
// high64, little endian).
func TokenGID(token string) [16]byte {
	lo, hi := xxh3Hash128([]byte(token))
	var g [16]byte
	for i := 0; i < 8; i++ {
		g[i] = byte(lo >> (8 * i))
		g[8+i] = byte(hi >> (8 * i))
	}
	return g
}

// TopicKey returns the data key of an endpoint entity (TopicKey of its
// domain, topic, type and hash).
func (e *Entity) TopicKey() (string, error) {
	if e.Kind == KindNode {
		return "", fmt.Errorf("%w: a node has no topic", ErrToken)
	}
	return TopicKey(e.Domain, e.Topic, e.Type, e.TypeHash)
}

// NodeInfo returns the node part of the entity.
func (e *Entity) NodeInfo() rmw.NodeInfo {
	return rmw.NodeInfo{Name: e.Node, Namespace: e.Namespace, Enclave: e.Enclave}
}

// EndpointInfo returns a publisher's or subscription's graph description:
// the ROS type name, the hash ("" for TypeHashNotSupported), the gid and
// the QoS as rmw.QoS. Local is false: the caller knows better.
func (e *Entity) EndpointInfo() (rmw.EndpointInfo, error) {
	if e.Kind != KindPublisher && e.Kind != KindSubscription {
		return rmw.EndpointInfo{}, fmt.Errorf("%w: %v is not a topic endpoint", ErrToken, e.Kind)
	}
	gid, err := e.GID()
	if err != nil {
		return rmw.EndpointInfo{}, err
	}
	h := e.TypeHash
	if h == TypeHashNotSupported {
		h = ""
	}
	return rmw.EndpointInfo{
		Topic: e.Topic, Type: ROSTypeName(e.Type), TypeHash: h, Node: e.NodeInfo(),
		Publisher: e.Kind == KindPublisher, GID: gid, QoS: e.QoS.QoS(),
	}, nil
}

// Token fields, by index.
const (
	tokAdmin = iota
	tokDomain
	tokZID
	tokNID
	tokID
	tokKind
	tokEnclave
	tokNamespace
	tokNode
	tokTopic
	tokType
	tokHash
	tokQoS
	tokBackends
)

// ParseToken parses a liveliness token into an entity, with the checks
// rmw_zenoh's Entity::make makes (at least 9 chunks, none empty, the admin
// space, a known kind, 13 chunks for an endpoint, a valid QoS field) and a
// few it leaves to exceptions (a domain that is not a decimal number). Like
// rmw_zenoh it ignores chunks past the ones it reads, and keeps the 14th
// only when it starts with "backends:".
func ParseToken(tok string) (*Entity, error) {
	p := strings.Split(tok, "/")
	if len(p) < tokNode+1 {
		return nil, fmt.Errorf("%w %q: %d chunks, want at least %d", ErrToken, tok, len(p), tokNode+1)
	}
	for i, c := range p {
		if c == "" {
			return nil, fmt.Errorf("%w %q: chunk %d is empty", ErrToken, tok, i)
		}
	}
	if p[tokAdmin] != AdminSpace {
		return nil, fmt.Errorf("%w %q: admin space %q, want %q", ErrToken, tok, p[0], AdminSpace)
	}
	kind, ok := kindOf(p[tokKind])
	if !ok {
		return nil, fmt.Errorf("%w %q: entity kind %q is not NN, MP, MS, SS or SC", ErrToken, tok, p[tokKind])
	}
	dom, err := parseUnsigned(p[tokDomain])
	if err != nil || dom > 0xffffffff {
		return nil, fmt.Errorf("%w %q: domain %q", ErrToken, tok, p[tokDomain])
	}
	e := &Entity{
		Domain: uint32(dom), ZID: p[tokZID], NodeID: p[tokNID], ID: p[tokID], Kind: kind,
		Enclave: Demangle(p[tokEnclave]), Namespace: Demangle(p[tokNamespace]), Node: Demangle(p[tokNode]),
	}
	if kind == KindNode {
		return e, nil
	}
	if len(p) < tokQoS+1 {
		return nil, fmt.Errorf("%w %q: a %v token needs %d chunks (topic, type, hash, qos), has %d", ErrToken, tok, kind, tokQoS+1, len(p))
	}
	q, err := ParseProfile(p[tokQoS])
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrToken, tok, err)
	}
	e.Topic, e.Type, e.TypeHash, e.QoS = Demangle(p[tokTopic]), Demangle(p[tokType]), Demangle(p[tokHash]), q
	if len(p) > tokBackends && strings.HasPrefix(p[tokBackends], "backends:") {
		e.Backends = p[tokBackends]
	}
	return e, nil
}

// LivelinessKeyAll returns the key expression a graph cache subscribes to
// and queries for every token of a domain: "@ros2_lv/<domain>/**".
func LivelinessKeyAll(domain uint32) string {
	return AdminSpace + "/" + strconv.FormatUint(uint64(domain), 10) + "/**"
}

// FormatZID returns zenoh's text form of a 16-byte session id: the bytes
// read as a little-endian unsigned 128-bit integer, in lowercase hex
// without leading zeros (as zenoh's Display and zros.h's zr_zid_str).
func FormatZID(id [16]byte) string {
	i := 15
	for i > 0 && id[i] == 0 {
		i--
	}
	const hexd = "0123456789abcdef"
	b := make([]byte, 0, 32)
	if id[i] >= 0x10 {
		b = append(b, hexd[id[i]>>4])
	}
	b = append(b, hexd[id[i]&15])
	for i--; i >= 0; i-- {
		b = append(b, hexd[id[i]>>4], hexd[id[i]&15])
	}
	return string(b)
}

// ParseZID parses zenoh's text form of a session id, with zenoh's rules:
// 1 to 32 lowercase hex digits, no leading zero, not zero. n is the id's
// length in bytes (zenoh ids on the wire carry 1 to 16 significant bytes).
func ParseZID(s string) (id [16]byte, n int, err error) {
	if s == "" || len(s) > 32 {
		return id, 0, fmt.Errorf("ros: zid %q: want 1 to 32 hex digits", s)
	}
	if s[0] == '0' {
		return id, 0, fmt.Errorf("ros: zid %q: leading zeros are not accepted", s)
	}
	for k := 0; k < len(s); k++ {
		c := s[len(s)-1-k]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		default:
			return id, 0, fmt.Errorf("ros: zid %q: %q is not a lowercase hex digit", s, c)
		}
		id[k/2] |= v << (4 * (k % 2))
	}
	return id, (len(s) + 1) / 2, nil
}
