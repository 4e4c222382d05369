package session

import (
	"bytes"
	"crypto/rand"
	"crypto/sha3"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/nros-go/nros/rmw/zenoh/wire"
)

// LinkConfig is what this side announces when a link opens.
type LinkConfig struct {
	ZID     wire.ZenohID
	WhatAmI wire.WhatAmI
	// BatchSize is the largest batch this side accepts (already limited to
	// the link's MTU).
	BatchSize  uint16
	Resolution wire.Resolution
	// Lease is this side's lease: it promises to send something at least
	// every Lease/4 (keep-alives when idle).
	Lease time.Duration
	// QoS asks for the 8 priority channels.
	QoS bool
	// Patch is the protocol patch level offered (wire.PatchCurrent).
	Patch uint8
}

// Params is what a handshake agreed.
type Params struct {
	LocalZID      wire.ZenohID
	RemoteZID     wire.ZenohID
	RemoteWhatAmI wire.WhatAmI
	// BatchSize is the largest batch either side may send.
	BatchSize     int
	FrameSN       wire.Bits
	RequestID     wire.Bits
	QoS           bool
	Patch         uint8
	TxInitialSN   uint32
	RxInitialSN   uint32
	LocalLease    time.Duration
	RemoteLease   time.Duration
	InitiatorSide bool
}

// CloseError is a failed handshake or transport: the link is closed after
// sending CLOSE with Reason (unless Received, when the remote sent it).
type CloseError struct {
	Reason   uint8
	Received bool
	Err      error
}

// Error implements the error interface.
func (e *CloseError) Error() string {
	who := "closing"
	if e.Received {
		who = "closed by remote"
	}
	if e.Err == nil {
		return fmt.Sprintf("zenoh: %s (%s)", who, wire.CloseReasonString(e.Reason))
	}
	return fmt.Sprintf("zenoh: %s (%s): %v", who, wire.CloseReasonString(e.Reason), e.Err)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *CloseError) Unwrap() error { return e.Err }

func closeErr(reason uint8, format string, args ...any) *CloseError {
	return &CloseError{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// CloseBatch is the batch that carries CLOSE for err (nil when the remote
// closed, or err is not a *CloseError).
func CloseBatch(err error, session bool) []byte {
	var ce *CloseError
	reason := uint8(wire.CloseGeneric)
	if errors.As(err, &ce) {
		if ce.Received {
			return nil
		}
		reason = ce.Reason
	}
	b, _ := wire.AppendTransport(nil, &wire.Close{Session: session, Reason: reason})
	return b
}

type hsState uint8

const (
	hsStart hsState = iota
	hsInitSent
	hsOpenSent
	hsWaitInit
	hsWaitOpen
	hsDone
	hsFailed
)

// Handshake is the INIT/OPEN exchange of one link, sans IO: feed it the
// batches the link receives (Handle) and send the batches it returns.
type Handshake struct {
	cfg       LinkConfig
	initiator bool
	state     hsState
	cookie    []byte
	p         Params
}

// NewInitiator starts a handshake as the side that connected; send the
// returned batch (InitSyn) first.
func NewInitiator(cfg LinkConfig) (*Handshake, []byte, error) {
	h := &Handshake{cfg: cfg, initiator: true}
	b, err := wire.AppendTransport(nil, &wire.Init{
		Version: wire.Version, WhatAmI: cfg.WhatAmI, ZID: cfg.ZID,
		Resolution: cfg.Resolution, BatchSize: cfg.BatchSize, QoS: cfg.QoS, Patch: cfg.Patch,
	})
	if err != nil {
		return nil, nil, err
	}
	h.state = hsInitSent
	return h, b, nil
}

// NewAcceptor starts a handshake as the side that accepted the link.
func NewAcceptor(cfg LinkConfig) *Handshake {
	return &Handshake{cfg: cfg, state: hsWaitInit}
}

// Done reports whether the handshake completed.
func (h *Handshake) Done() bool { return h.state == hsDone }

// Params is the agreement (valid once Done).
func (h *Handshake) Params() Params { return h.p }

// Handle processes one received batch. It returns the batch to send back
// (nil if none) and whether the handshake is complete. An error is a
// *CloseError: send CloseBatch(err) and close the link.
func (h *Handshake) Handle(batch []byte) ([]byte, bool, error) {
	if h.state == hsDone || h.state == hsFailed {
		return nil, h.state == hsDone, errors.New("zenoh handshake: already finished")
	}
	m, _, err := wire.DecodeTransport(batch)
	if err != nil {
		h.state = hsFailed
		return nil, false, &CloseError{Reason: wire.CloseInvalid, Err: err}
	}
	if c, ok := m.(*wire.Close); ok {
		h.state = hsFailed
		return nil, false, &CloseError{Reason: c.Reason, Received: true}
	}
	var out []byte
	switch h.state {
	case hsInitSent:
		out, err = h.onInitAck(m)
	case hsOpenSent:
		err = h.onOpenAck(m)
	case hsWaitInit:
		out, err = h.onInitSyn(m)
	case hsWaitOpen:
		out, err = h.onOpenSyn(m)
	}
	if err != nil {
		h.state = hsFailed
		return nil, false, err
	}
	return out, h.state == hsDone, nil
}

func minBits(a, b wire.Bits) wire.Bits {
	if a < b {
		return a
	}
	return b
}

func (h *Handshake) onInitAck(m wire.TransportMessage) ([]byte, error) {
	ia, ok := m.(*wire.Init)
	if !ok || !ia.Ack {
		return nil, closeErr(wire.CloseInvalid, "expected InitAck, got %T", m)
	}
	if ia.Version != wire.Version {
		return nil, closeErr(wire.CloseInvalid, "protocol version %#x (want %#x)", ia.Version, wire.Version)
	}
	if ia.ZID == h.cfg.ZID {
		return nil, closeErr(wire.CloseConnectionToSelf, "connected to myself")
	}
	if ia.Resolution.FrameSN() > h.cfg.Resolution.FrameSN() || ia.Resolution.RequestID() > h.cfg.Resolution.RequestID() {
		return nil, closeErr(wire.CloseInvalid, "resolution %#x above ours %#x", uint8(ia.Resolution), uint8(h.cfg.Resolution))
	}
	if ia.Patch > h.cfg.Patch {
		return nil, closeErr(wire.CloseInvalid, "patch %d above ours %d", ia.Patch, h.cfg.Patch)
	}
	if ia.BatchSize < wire.MinBatchSize { // refused: a link on which nothing could be sent
		return nil, closeErr(wire.CloseInvalid, "batch size %d below the minimum %d", ia.BatchSize, wire.MinBatchSize)
	}
	h.p = Params{
		LocalZID: h.cfg.ZID, RemoteZID: ia.ZID, RemoteWhatAmI: ia.WhatAmI,
		BatchSize: int(min(h.cfg.BatchSize, ia.BatchSize)),
		FrameSN:   ia.Resolution.FrameSN(), RequestID: ia.Resolution.RequestID(),
		QoS: h.cfg.QoS && (ia.QoS || ia.HasQoSLink), Patch: ia.Patch,
		LocalLease: h.cfg.Lease, InitiatorSide: true,
	}
	h.p.TxInitialSN = InitialSN(h.cfg.ZID, ia.ZID, h.p.FrameSN)
	out, err := wire.AppendTransport(nil, &wire.Open{Lease: h.cfg.Lease, InitialSN: h.p.TxInitialSN, Cookie: ia.Cookie})
	if err != nil {
		return nil, closeErr(wire.CloseGeneric, "%v", err)
	}
	h.state = hsOpenSent
	return out, nil
}

func (h *Handshake) onOpenAck(m wire.TransportMessage) error {
	oa, ok := m.(*wire.Open)
	if !ok || !oa.Ack {
		return closeErr(wire.CloseInvalid, "expected OpenAck, got %T", m)
	}
	if err := h.checkSN(oa.InitialSN); err != nil {
		return err
	}
	h.p.RxInitialSN = oa.InitialSN
	h.p.RemoteLease = oa.Lease
	h.state = hsDone
	return nil
}

func (h *Handshake) checkSN(sn uint32) error {
	if uint64(sn)&^h.p.FrameSN.SNMask() != 0 {
		return closeErr(wire.CloseInvalid, "initial sn %d beyond the resolution", sn)
	}
	return nil
}

func (h *Handshake) onInitSyn(m wire.TransportMessage) ([]byte, error) {
	is, ok := m.(*wire.Init)
	if !ok || is.Ack {
		return nil, closeErr(wire.CloseInvalid, "expected InitSyn, got %T", m)
	}
	if is.Version != wire.Version {
		return nil, closeErr(wire.CloseInvalid, "protocol version %#x (want %#x)", is.Version, wire.Version)
	}
	if is.ZID == h.cfg.ZID {
		return nil, closeErr(wire.CloseConnectionToSelf, "connected to myself")
	}
	if is.BatchSize < wire.MinBatchSize {
		return nil, closeErr(wire.CloseInvalid, "batch size %d below the minimum %d", is.BatchSize, wire.MinBatchSize)
	}
	h.p = Params{
		LocalZID: h.cfg.ZID, RemoteZID: is.ZID, RemoteWhatAmI: is.WhatAmI,
		BatchSize:  int(min(h.cfg.BatchSize, is.BatchSize)),
		FrameSN:    minBits(is.Resolution.FrameSN(), h.cfg.Resolution.FrameSN()),
		RequestID:  minBits(is.Resolution.RequestID(), h.cfg.Resolution.RequestID()),
		QoS:        h.cfg.QoS && (is.QoS || is.HasQoSLink),
		Patch:      min(is.Patch, h.cfg.Patch),
		LocalLease: h.cfg.Lease,
	}
	h.cookie = make([]byte, 16)
	_, _ = rand.Read(h.cookie)
	out, err := wire.AppendTransport(nil, &wire.Init{
		Ack: true, Version: wire.Version, WhatAmI: h.cfg.WhatAmI, ZID: h.cfg.ZID,
		Resolution: h.cfg.Resolution.With(h.p.FrameSN, h.p.RequestID), BatchSize: uint16(h.p.BatchSize),
		Cookie: h.cookie, QoS: h.p.QoS, Patch: h.p.Patch,
	})
	if err != nil {
		return nil, closeErr(wire.CloseGeneric, "%v", err)
	}
	h.state = hsWaitOpen
	return out, nil
}

func (h *Handshake) onOpenSyn(m wire.TransportMessage) ([]byte, error) {
	os, ok := m.(*wire.Open)
	if !ok || os.Ack {
		return nil, closeErr(wire.CloseInvalid, "expected OpenSyn, got %T", m)
	}
	if !bytes.Equal(os.Cookie, h.cookie) {
		return nil, closeErr(wire.CloseInvalid, "unknown cookie")
	}
	if err := h.checkSN(os.InitialSN); err != nil {
		return nil, err
	}
	h.p.RxInitialSN = os.InitialSN
	h.p.RemoteLease = os.Lease
	h.p.TxInitialSN = InitialSN(h.cfg.ZID, h.p.RemoteZID, h.p.FrameSN)
	out, err := wire.AppendTransport(nil, &wire.Open{Ack: true, Lease: h.cfg.Lease, InitialSN: h.p.TxInitialSN})
	if err != nil {
		return nil, closeErr(wire.CloseGeneric, "%v", err)
	}
	h.state = hsDone
	return out, nil
}

// InitialSN is the first sequence number this side sends: as zenoh, the
// first bytes of SHAKE128(local zid || remote zid), little endian, within
// the resolution (random-looking yet the same for every attempt between
// two sessions).
func InitialSN(local, remote wire.ZenohID, res wire.Bits) uint32 {
	h := sha3.NewSHAKE128()
	h.Write(local.Bytes())
	h.Write(remote.Bytes())
	var b [4]byte
	h.Read(b[:])
	return uint32(uint64(binary.LittleEndian.Uint32(b[:])) & res.SNMask())
}
