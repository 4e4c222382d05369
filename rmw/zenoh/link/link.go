package link

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Link is an established point-to-point link that carries batches.
type Link interface {
	// ReadBatch reads the next batch into buf, which must hold MTU bytes,
	// and returns its length.
	ReadBatch(buf []byte) (int, error)
	// WriteBatch sends one batch (at most MTU bytes).
	WriteBatch(b []byte) error
	// Close closes the link; blocked reads and writes return.
	Close() error
	// MTU is the largest batch the link carries.
	MTU() int
	// Streamed reports whether the link is a byte stream (TCP): zenoh then
	// counts on it for reliability and ordering.
	Streamed() bool
	// Local and Remote are the link's endpoints as zenoh locators.
	Local() Endpoint
	Remote() Endpoint
}

// Listener accepts links.
type Listener interface {
	Accept() (Link, error)
	Close() error
	// Endpoint is where it listens (with the port chosen if it was 0).
	Endpoint() Endpoint
}

// ErrClosed is returned by a closed link or listener.
var ErrClosed = errors.New("zenoh link: closed")

// MaxBatch is the largest batch zenoh defines (the 2-byte length's limit).
const MaxBatch = 65535

// Endpoint is a zenoh endpoint: protocol, address, and the optional
// metadata (after '?') and configuration (after '#'), each a
// ';'-separated list of key=value.
type Endpoint struct {
	Proto    string
	Address  string
	Metadata string
	Config   string
}

// ParseEndpoint parses "proto/address[?metadata][#config]". Known
// protocols are tcp and udp (and mem for in-memory tests).
func ParseEndpoint(s string) (Endpoint, error) {
	var e Endpoint
	rest := s
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest, e.Config = rest[:i], rest[i+1:]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, e.Metadata = rest[:i], rest[i+1:]
	}
	proto, addr, ok := strings.Cut(rest, "/")
	if !ok || proto == "" || addr == "" {
		return Endpoint{}, fmt.Errorf("zenoh endpoint %q: want proto/address", s)
	}
	e.Proto, e.Address = proto, addr
	switch proto {
	case "tcp", "udp":
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return Endpoint{}, fmt.Errorf("zenoh endpoint %q: %v", s, err)
		}
	case "mem":
	default:
		return Endpoint{}, fmt.Errorf("zenoh endpoint %q: protocol %q not supported (tcp, udp)", s, proto)
	}
	for _, kv := range [][2]string{{"metadata", e.Metadata}, {"config", e.Config}} {
		if kv[1] == "" {
			continue
		}
		for _, f := range strings.Split(kv[1], ";") {
			if k, _, ok := strings.Cut(f, "="); !ok || k == "" {
				return Endpoint{}, fmt.Errorf("zenoh endpoint %q: %s field %q is not key=value", s, kv[0], f)
			}
		}
	}
	return e, nil
}

// String is the locator form (metadata and config included).
func (e Endpoint) String() string {
	s := e.Proto + "/" + e.Address
	if e.Metadata != "" {
		s += "?" + e.Metadata
	}
	if e.Config != "" {
		s += "#" + e.Config
	}
	return s
}

// Locator is the endpoint without its configuration.
func (e Endpoint) Locator() string {
	s := e.Proto + "/" + e.Address
	if e.Metadata != "" {
		s += "?" + e.Metadata
	}
	return s
}

// Get returns a metadata or config value by key.
func (e Endpoint) Get(key string) (string, bool) {
	for _, part := range []string{e.Metadata, e.Config} {
		for _, f := range strings.Split(part, ";") {
			if k, v, ok := strings.Cut(f, "="); ok && k == key {
				return v, true
			}
		}
	}
	return "", false
}

// resolveAddr turns the address of a tcp or udp endpoint into host:port;
// "localhost" becomes 127.0.0.1 (zenoh's default endpoints use it).
func resolveAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if strings.EqualFold(host, "localhost") || host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

func endpointOf(proto string, a net.Addr) Endpoint {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return Endpoint{Proto: proto, Address: a.String()}
	}
	return Endpoint{Proto: proto, Address: netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()}
}

// Dial connects to a tcp or udp endpoint.
func Dial(ctx context.Context, e Endpoint) (Link, error) {
	switch e.Proto {
	case "tcp":
		return dialTCP(ctx, e)
	case "udp":
		return dialUDP(ctx, e)
	case "mem":
		return dialMem(e)
	}
	return nil, fmt.Errorf("zenoh link: cannot dial %s", e)
}

// Listen listens on a tcp or udp endpoint.
func Listen(e Endpoint) (Listener, error) {
	switch e.Proto {
	case "tcp":
		return listenTCP(e)
	case "udp":
		return listenUDP(e)
	case "mem":
		return listenMem(e)
	}
	return nil, fmt.Errorf("zenoh link: cannot listen on %s", e)
}
