package wire

import (
	"encoding/binary"
	"fmt"
)

// ParameterID identifies a parameter in a parameter list (ParameterId_t).
type ParameterID uint16

// Parameter ids used by SPDP, SEDP and inline QoS (DDSI-RTPS 2.x 9.6.2.2,
// DDS-XTypes, and vendor additions).
const (
	PIDPad                              ParameterID = 0x0000
	PIDSentinel                         ParameterID = 0x0001
	PIDParticipantLeaseDuration         ParameterID = 0x0002
	PIDTimeBasedFilter                  ParameterID = 0x0004
	PIDTopicName                        ParameterID = 0x0005
	PIDOwnershipStrength                ParameterID = 0x0006
	PIDTypeName                         ParameterID = 0x0007
	PIDDomainID                         ParameterID = 0x000f
	PIDProtocolVersion                  ParameterID = 0x0015
	PIDVendorID                         ParameterID = 0x0016
	PIDReliability                      ParameterID = 0x001a
	PIDLiveliness                       ParameterID = 0x001b
	PIDDurability                       ParameterID = 0x001d
	PIDDurabilityService                ParameterID = 0x001e
	PIDOwnership                        ParameterID = 0x001f
	PIDPresentation                     ParameterID = 0x0021
	PIDDeadline                         ParameterID = 0x0023
	PIDDestinationOrder                 ParameterID = 0x0025
	PIDLatencyBudget                    ParameterID = 0x0027
	PIDPartition                        ParameterID = 0x0029
	PIDLifespan                         ParameterID = 0x002b
	PIDUserData                         ParameterID = 0x002c
	PIDGroupData                        ParameterID = 0x002d
	PIDTopicData                        ParameterID = 0x002e
	PIDUnicastLocator                   ParameterID = 0x002f
	PIDMulticastLocator                 ParameterID = 0x0030
	PIDDefaultUnicastLocator            ParameterID = 0x0031
	PIDMetatrafficUnicastLocator        ParameterID = 0x0032
	PIDMetatrafficMulticastLocator      ParameterID = 0x0033
	PIDParticipantManualLivelinessCount ParameterID = 0x0034
	PIDHistory                          ParameterID = 0x0040
	PIDResourceLimits                   ParameterID = 0x0041
	PIDExpectsInlineQos                 ParameterID = 0x0043
	PIDParticipantBuiltinEndpoints      ParameterID = 0x0044
	PIDDefaultMulticastLocator          ParameterID = 0x0048
	PIDTransportPriority                ParameterID = 0x0049
	PIDParticipantGUID                  ParameterID = 0x0050
	PIDGroupGUID                        ParameterID = 0x0052
	PIDBuiltinEndpointSet               ParameterID = 0x0058
	PIDPropertyList                     ParameterID = 0x0059
	PIDEndpointGUID                     ParameterID = 0x005a
	PIDTypeMaxSizeSerialized            ParameterID = 0x0060
	PIDEntityName                       ParameterID = 0x0062
	PIDKeyHash                          ParameterID = 0x0070
	PIDStatusInfo                       ParameterID = 0x0071
	PIDTypeObject                       ParameterID = 0x0072
	PIDDataRepresentation               ParameterID = 0x0073
	PIDTypeConsistencyEnforcement       ParameterID = 0x0074
	PIDTypeInformation                  ParameterID = 0x0075
	PIDBuiltinEndpointQos               ParameterID = 0x0077
	PIDRelatedSampleIdentity            ParameterID = 0x0083
	PIDDomainTag                        ParameterID = 0x4014
	// PIDFastDDSRelatedSampleIdentity is Fast DDS's legacy vendor PID for
	// the related sample identity (the only one Fast DDS <= 2.9 reads).
	PIDFastDDSRelatedSampleIdentity ParameterID = 0x800f
)

// Parameter id flag bits.
const (
	// PIDFlagVendorSpecific marks a vendor-specific PID, to be ignored when
	// not understood.
	PIDFlagVendorSpecific ParameterID = 0x8000
	// PIDFlagMustUnderstand marks a PID that makes the whole list invalid
	// when not understood (for non-vendor PIDs).
	PIDFlagMustUnderstand ParameterID = 0x4000
)

// IsVendorSpecific reports whether the vendor-specific bit (0x8000) is set.
func (p ParameterID) IsVendorSpecific() bool { return p&PIDFlagVendorSpecific != 0 }

// MustUnderstand reports whether the must-understand bit (0x4000) is set
// on a non-vendor PID.
func (p ParameterID) MustUnderstand() bool {
	return p&PIDFlagMustUnderstand != 0 && p&PIDFlagVendorSpecific == 0
}

// Encapsulation identifiers (the first two bytes, big endian, of a serialized payload).
const (
	EncapsulationCDRBE   uint16 = 0x0000
	EncapsulationCDRLE   uint16 = 0x0001
	EncapsulationPLCDRBE uint16 = 0x0002
	EncapsulationPLCDRLE uint16 = 0x0003
)

// Status info flags (PID_STATUS_INFO, carried in the last byte).
const (
	StatusInfoDisposed     uint32 = 0x1
	StatusInfoUnregistered uint32 = 0x2
	StatusInfoFiltered     uint32 = 0x4
)

// Parameter list errors.
var (
	ErrNoSentinel       = fmt.Errorf("%w: parameter list without sentinel", ErrMalformed)
	ErrMustUnderstand   = fmt.Errorf("%w: unknown must-understand parameter", ErrMalformed)
	ErrBadParameter     = fmt.Errorf("%w: bad parameter value", ErrMalformed)
	ErrBadEncapsulation = fmt.Errorf("%w: unsupported encapsulation", ErrMalformed)
)

// ParameterList is an encoded parameter list (including its sentinel) and
// its byte order. Data aliases the buffer it was decoded from.
type ParameterList struct {
	Data      []byte
	BigEndian bool
}

// Order returns the byte order of the list.
func (pl ParameterList) Order() binary.ByteOrder {
	if pl.BigEndian {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Empty reports whether the list has no bytes at all (no Q flag).
func (pl ParameterList) Empty() bool { return len(pl.Data) == 0 }

// scanParameterList checks the list framing and returns its length up to
// and including the sentinel.
func scanParameterList(b []byte, bigEndian bool) (int, error) {
	it := ParameterList{Data: b, BigEndian: bigEndian}.Iter()
	for {
		if _, _, ok := it.Next(); !ok {
			break
		}
	}
	if it.err != nil {
		return 0, it.err
	}
	return it.off, nil
}

// ParameterIterator walks a ParameterList. PID_PAD entries are skipped;
// the sentinel ends the walk. Values alias the list.
type ParameterIterator struct {
	pl   ParameterList
	off  int
	done bool
	err  error
}

// Iter returns an iterator over the parameters of pl.
func (pl ParameterList) Iter() ParameterIterator { return ParameterIterator{pl: pl} }

// Next returns the next parameter. ok is false at the sentinel or on an
// error (see Err). Value lengths are exactly as declared; the iterator
// advances by the declared length rounded up to 4.
func (it *ParameterIterator) Next() (pid ParameterID, value []byte, ok bool) {
	bo := it.pl.Order()
	for !it.done {
		b := it.pl.Data[it.off:]
		if len(b) < 4 {
			it.done = true
			it.err = ErrNoSentinel
			return 0, nil, false
		}
		pid = ParameterID(bo.Uint16(b))
		n := int(bo.Uint16(b[2:]))
		if pid == PIDSentinel {
			it.done = true
			it.off += 4
			return 0, nil, false
		}
		adv := (n + 3) &^ 3
		if 4+adv > len(b) {
			it.done = true
			it.err = fmt.Errorf("%w: parameter 0x%04x length %d exceeds %d remaining bytes", ErrTruncated, uint16(pid), n, len(b)-4)
			return 0, nil, false
		}
		it.off += 4 + adv
		if pid == PIDPad {
			continue
		}
		return pid, b[4 : 4+n : 4+n], true
	}
	return 0, nil, false
}

// Err returns the framing error that stopped the iterator, if any.
func (it *ParameterIterator) Err() error { return it.err }

// Find returns the value of the first parameter with the given pid.
func (pl ParameterList) Find(pid ParameterID) ([]byte, bool) {
	it := pl.Iter()
	for {
		p, v, ok := it.Next()
		if !ok {
			return nil, false
		}
		if p == pid {
			return v, true
		}
	}
}

// ParsePLPayload checks the 4-byte PL_CDR_LE / PL_CDR_BE encapsulation
// header of a discovery payload and returns the parameter list after it.
func ParsePLPayload(payload []byte) (ParameterList, error) {
	if len(payload) < 4 {
		return ParameterList{}, ErrTruncated
	}
	switch binary.BigEndian.Uint16(payload) {
	case EncapsulationPLCDRLE:
		return ParameterList{Data: payload[4:]}, nil
	case EncapsulationPLCDRBE:
		return ParameterList{Data: payload[4:], BigEndian: true}, nil
	}
	return ParameterList{}, fmt.Errorf("%w: 0x%04x", ErrBadEncapsulation, binary.BigEndian.Uint16(payload))
}

// AppendParameter appends a little-endian parameter with the given value,
// zero-padded to a multiple of 4. It panics if the value exceeds 65532 bytes.
func AppendParameter(dst []byte, pid ParameterID, value []byte) []byte {
	n := (len(value) + 3) &^ 3
	if n > 0xffff {
		panic("wire: parameter value too long")
	}
	dst = binary.LittleEndian.AppendUint16(dst, uint16(pid))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(n))
	dst = append(dst, value...)
	return appendZeros(dst, n-len(value))
}

// AppendSentinel appends PID_SENTINEL (little endian).
func AppendSentinel(dst []byte) []byte {
	return append(dst, byte(PIDSentinel), 0, 0, 0)
}

func appendZeros(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, 0)
	}
	return dst
}

// SampleIdentity is a writer GUID and sequence number (used by Fast DDS
// services as the related sample identity).
type SampleIdentity struct {
	Writer GUID
	SN     SequenceNumber
}

// InlineQos holds the inline QoS parameters that matter for ROS traffic.
// Other parameters are ignored on decode.
type InlineQos struct {
	HasKeyHash bool
	KeyHash    [16]byte // for built-in topics: the entity GUID

	HasStatusInfo bool
	StatusInfo    uint32 // StatusInfoDisposed | StatusInfoUnregistered | StatusInfoFiltered

	// HasRelatedSampleIdentity is set if PID_RELATED_SAMPLE_IDENTITY
	// (0x0083) or Fast DDS's legacy 0x800f was present; 0x0083 wins.
	HasRelatedSampleIdentity bool
	RelatedSampleIdentity    SampleIdentity
}

// DecodeInlineQos reads the inline QoS of a DATA or DATA_FRAG. It does not
// allocate. Unknown vendor parameters are skipped; an unknown non-vendor
// parameter with the must-understand bit makes it fail (the spec says to
// drop such a sample).
func DecodeInlineQos(pl ParameterList) (InlineQos, error) {
	var q InlineQos
	bo := pl.Order()
	have0083 := false
	it := pl.Iter()
	for {
		pid, v, ok := it.Next()
		if !ok {
			break
		}
		switch pid {
		case PIDKeyHash:
			if len(v) < 16 {
				return q, fmt.Errorf("%w: KEY_HASH length %d", ErrBadParameter, len(v))
			}
			q.HasKeyHash = true
			copy(q.KeyHash[:], v)
		case PIDStatusInfo:
			if len(v) < 4 {
				return q, fmt.Errorf("%w: STATUS_INFO length %d", ErrBadParameter, len(v))
			}
			// Both stacks read the flags big endian whatever the list order.
			q.HasStatusInfo = true
			q.StatusInfo = binary.BigEndian.Uint32(v)
		case PIDRelatedSampleIdentity, PIDFastDDSRelatedSampleIdentity:
			if len(v) < 24 {
				return q, fmt.Errorf("%w: RELATED_SAMPLE_IDENTITY length %d", ErrBadParameter, len(v))
			}
			if pid == PIDFastDDSRelatedSampleIdentity && have0083 {
				continue
			}
			have0083 = have0083 || pid == PIDRelatedSampleIdentity
			q.HasRelatedSampleIdentity = true
			q.RelatedSampleIdentity = SampleIdentity{
				Writer: GUIDFromBytes([16]byte(v[:16])),
				SN:     readSN(bo, v[16:]),
			}
		default:
			if pid.MustUnderstand() {
				return q, fmt.Errorf("%w: 0x%04x", ErrMustUnderstand, uint16(pid))
			}
		}
	}
	return q, it.Err()
}

// Append appends q as a little-endian parameter list with sentinel. A
// related sample identity is written under both 0x0083 and Fast DDS's
// legacy 0x800f (see the wire notes, 3.4). With nothing set it appends only
// the sentinel.
func (q *InlineQos) Append(dst []byte) []byte {
	le := binary.LittleEndian
	if q.HasKeyHash {
		dst = le.AppendUint16(dst, uint16(PIDKeyHash))
		dst = le.AppendUint16(dst, 16)
		dst = append(dst, q.KeyHash[:]...)
	}
	if q.HasStatusInfo {
		dst = le.AppendUint16(dst, uint16(PIDStatusInfo))
		dst = le.AppendUint16(dst, 4)
		dst = binary.BigEndian.AppendUint32(dst, q.StatusInfo)
	}
	if q.HasRelatedSampleIdentity {
		for _, pid := range [2]ParameterID{PIDRelatedSampleIdentity, PIDFastDDSRelatedSampleIdentity} {
			dst = le.AppendUint16(dst, uint16(pid))
			dst = le.AppendUint16(dst, 24)
			dst = append(dst, q.RelatedSampleIdentity.Writer.Prefix[:]...)
			dst = append(dst, q.RelatedSampleIdentity.Writer.Entity[:]...)
			dst = appendSN(dst, q.RelatedSampleIdentity.SN)
		}
	}
	return AppendSentinel(dst)
}

func appendSN(dst []byte, sn SequenceNumber) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(sn.High()))
	return binary.LittleEndian.AppendUint32(dst, sn.Low())
}
