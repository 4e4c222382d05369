// Package interop holds the tests that run real peers next to Go nodes:
// Cyclone DDS and Fast DDS programs (interop/src, built by build.sh), the
// zenoh-pico peers, and the nros examples and CLI, all inside interop/netns.
// It has test files only, so nothing can import it; the harness that starts
// peers is the fixture package internal/fixture/peers, named here without
// its qualifier.
package interop

import "github.com/nros-go/nros/internal/fixture/peers"

// The harness's names as the tests use them.
type (
	Proc     = peers.Proc
	Capture  = peers.Capture
	Datagram = peers.Datagram
)

var (
	Vendors           = peers.Vendors
	ZenohPeers        = peers.ZenohPeers
	Peers             = peers.Peers
	InNamespace       = peers.InNamespace
	RequireNamespace  = peers.RequireNamespace
	Start             = peers.Start
	StartEnv          = peers.StartEnv
	Domain            = peers.Domain
	DomainPorts       = peers.DomainPorts
	UDPLoss           = peers.UDPLoss
	Release           = peers.Release
	Keystore          = peers.Keystore
	StartCapture      = peers.StartCapture
	RequireZenohPeers = peers.RequireZenohPeers
	FreeTCPPort       = peers.FreeTCPPort
	LoopbackTCP       = peers.LoopbackTCP
	lastLine          = peers.LastLine
	matchedSubs       = peers.MatchedSubs
	matchedPubs       = peers.MatchedPubs
)

const (
	ExitOK      = peers.ExitOK
	ExitUsage   = peers.ExitUsage
	ExitTimeout = peers.ExitTimeout
	ExitOrder   = peers.ExitOrder
)
