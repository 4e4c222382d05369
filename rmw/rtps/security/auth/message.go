package auth

import (
	"encoding/binary"
	"fmt"

	"github.com/nros-go/nros/cdr"
	"github.com/nros-go/nros/rmw/rtps/security/token"
)

// GUID is an RTPS GUID (prefix and entity id).
type GUID [16]byte

// Prefix returns the GUID prefix.
func (g GUID) Prefix() GUIDPrefix {
	var p GUIDPrefix
	copy(p[:], g[:12])
	return p
}

// MakeGUID joins a prefix and an entity id.
func MakeGUID(p GUIDPrefix, entity uint32) GUID {
	var g GUID
	copy(g[:], p[:])
	binary.BigEndian.PutUint32(g[12:], entity)
	return g
}

// Entity ids of the secure builtin endpoints (DDS Security 1.1 §7.4.5).
const (
	EntityParticipant                    uint32 = 0x000001c1
	EntityStatelessMessageWriter         uint32 = 0x000201c3
	EntityStatelessMessageReader         uint32 = 0x000201c4
	EntityVolatileMessageSecureWriter    uint32 = 0xff0202c3
	EntityVolatileMessageSecureReader    uint32 = 0xff0202c4
	EntityPublicationsSecureWriter       uint32 = 0xff0003c2
	EntityPublicationsSecureReader       uint32 = 0xff0003c7
	EntitySubscriptionsSecureWriter      uint32 = 0xff0004c2
	EntitySubscriptionsSecureReader      uint32 = 0xff0004c7
	EntityParticipantMessageSecureWriter uint32 = 0xff0200c2
	EntityParticipantMessageSecureReader uint32 = 0xff0200c7
	EntitySPDPReliableSecureWriter       uint32 = 0xff0101c2
	EntitySPDPReliableSecureReader       uint32 = 0xff0101c7
)

// Message class ids of DCPSParticipantStatelessMessage.
const (
	GMClassAuthRequest = "dds.sec.auth_request"
	GMClassAuth        = "dds.sec.auth"
)

// MessageIdentity is a message's source GUID and sequence number.
type MessageIdentity struct {
	Source GUID
	Seq    int64
}

// GenericMessage is a ParticipantGenericMessage, the sample type of
// DCPSParticipantStatelessMessage and DCPSParticipantVolatileMessageSecure.
type GenericMessage struct {
	MessageIdentity        MessageIdentity
	RelatedMessageIdentity MessageIdentity
	DestinationParticipant GUID
	DestinationEndpoint    GUID
	SourceEndpoint         GUID
	ClassID                string
	Data                   []token.DataHolder
}

// MaxGenericMessageSize bounds a decoded message.
const MaxGenericMessageSize = 1 << 20

// Marshal encodes the message as a serialized sample: the CDR_LE
// encapsulation header and the body (GUIDs as 16 octets, sequence numbers
// as int64, aligned from the start of the body).
func (m *GenericMessage) Marshal() []byte {
	e := cdr.NewEncoder(nil, true)
	putID := func(id MessageIdentity) {
		e.WriteOctetArray(id.Source[:])
		e.WriteInt64(id.Seq)
	}
	putID(m.MessageIdentity)
	putID(m.RelatedMessageIdentity)
	e.WriteOctetArray(m.DestinationParticipant[:])
	e.WriteOctetArray(m.DestinationEndpoint[:])
	e.WriteOctetArray(m.SourceEndpoint[:])
	e.WriteString(m.ClassID)
	token.EncodeSeq(e, m.Data)
	return e.Bytes()
}

// UnmarshalGenericMessage decodes a serialized sample (CDR_LE or CDR_BE).
func UnmarshalGenericMessage(b []byte) (*GenericMessage, error) {
	if len(b) > MaxGenericMessageSize {
		return nil, fmt.Errorf("ParticipantGenericMessage: %d bytes is too large", len(b))
	}
	d, err := cdr.NewDecoder(b)
	if err != nil {
		return nil, fmt.Errorf("ParticipantGenericMessage: %w", err)
	}
	var m GenericMessage
	getID := func(id *MessageIdentity) {
		d.ReadOctetArray(id.Source[:])
		id.Seq = d.ReadInt64()
	}
	getID(&m.MessageIdentity)
	getID(&m.RelatedMessageIdentity)
	d.ReadOctetArray(m.DestinationParticipant[:])
	d.ReadOctetArray(m.DestinationEndpoint[:])
	d.ReadOctetArray(m.SourceEndpoint[:])
	m.ClassID = d.ReadBoundedString(256)
	m.Data = token.DecodeSeq(d)
	if err := d.Err(); err != nil {
		return nil, fmt.Errorf("ParticipantGenericMessage: %w", err)
	}
	return &m, nil
}

// PID_PARTICIPANT_GUID in a parameter list.
const pidParticipantGUID = 0x0050

// ParticipantGUIDFromPData returns the PID_PARTICIPANT_GUID of c.pdata, a
// big-endian parameter list without encapsulation header (what Cyclone DDS
// and Fast DDS send).
func ParticipantGUIDFromPData(b []byte) (GUID, error) {
	for off := 0; off+4 <= len(b); {
		pid := binary.BigEndian.Uint16(b[off:])
		n := int(binary.BigEndian.Uint16(b[off+2:]))
		off += 4
		if pid == 1 { // sentinel
			break
		}
		if off+n > len(b) {
			break
		}
		if pid&0x3fff == pidParticipantGUID && n >= 16 {
			var g GUID
			copy(g[:], b[off:off+16])
			return g, nil
		}
		off += (n + 3) &^ 3
	}
	return GUID{}, fmt.Errorf("%w: c.pdata has no PID_PARTICIPANT_GUID", ErrBadToken)
}

// NewStatelessMessage builds a DCPSParticipantStatelessMessage sample the
// way Cyclone DDS and Fast DDS do: message_identity is the local stateless
// writer's GUID and seq (the sample's sequence number), related is the
// identity of the message answered (zero for a Request or an AuthRequest),
// the destination participant GUID is the remote participant, destination
// and source endpoint GUIDs are zero, and message_data is the one token.
// class is GMClassAuth, or GMClassAuthRequest for an AuthRequest token.
func NewStatelessMessage(local, remote GUIDPrefix, seq int64, related MessageIdentity, class string, tok token.DataHolder) *GenericMessage {
	return &GenericMessage{
		MessageIdentity:        MessageIdentity{Source: MakeGUID(local, EntityStatelessMessageWriter), Seq: seq},
		RelatedMessageIdentity: related,
		DestinationParticipant: MakeGUID(remote, EntityParticipant),
		ClassID:                class,
		Data:                   []token.DataHolder{tok},
	}
}

// Token returns the one token of a stateless message of class
// GMClassAuth or GMClassAuthRequest addressed to the participant local.
func (m *GenericMessage) Token(local GUIDPrefix) (*token.DataHolder, error) {
	if m.ClassID != GMClassAuth && m.ClassID != GMClassAuthRequest {
		return nil, fmt.Errorf("%w: stateless message class %q", ErrBadToken, m.ClassID)
	}
	if m.DestinationParticipant != MakeGUID(local, EntityParticipant) {
		return nil, fmt.Errorf("%w: stateless message for participant %x", ErrBadToken, m.DestinationParticipant[:])
	}
	if len(m.Data) != 1 {
		return nil, fmt.Errorf("%w: stateless message with %d tokens", ErrBadToken, len(m.Data))
	}
	return &m.Data[0], nil
}

// PDataParams walks a big-endian parameter list (c.pdata) and calls f with
// each parameter id and value until the sentinel; it stops when f returns
// false. It returns an error for a truncated list.
func PDataParams(b []byte, f func(pid uint16, value []byte) bool) error {
	for off := 0; ; {
		if off+4 > len(b) {
			return fmt.Errorf("%w: c.pdata ends without a sentinel", ErrBadToken)
		}
		pid := binary.BigEndian.Uint16(b[off:])
		n := int(binary.BigEndian.Uint16(b[off+2:]))
		off += 4
		if pid == 1 {
			return nil
		}
		if off+n > len(b) {
			return fmt.Errorf("%w: c.pdata parameter %#x runs past the end", ErrBadToken, pid)
		}
		if !f(pid, b[off:off+n]) {
			return nil
		}
		off += n
	}
}
