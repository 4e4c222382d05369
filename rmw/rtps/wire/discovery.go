package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// BuiltinEndpointSet is the PID_BUILTIN_ENDPOINT_SET bit mask.
type BuiltinEndpointSet uint32

// Built-in endpoint bits.
const (
	BuiltinParticipantAnnouncer         BuiltinEndpointSet = 1 << 0
	BuiltinParticipantDetector          BuiltinEndpointSet = 1 << 1
	BuiltinPublicationsAnnouncer        BuiltinEndpointSet = 1 << 2
	BuiltinPublicationsDetector         BuiltinEndpointSet = 1 << 3
	BuiltinSubscriptionsAnnouncer       BuiltinEndpointSet = 1 << 4
	BuiltinSubscriptionsDetector        BuiltinEndpointSet = 1 << 5
	BuiltinParticipantMessageDataWriter BuiltinEndpointSet = 1 << 10
	BuiltinParticipantMessageDataReader BuiltinEndpointSet = 1 << 11
	BuiltinTypeLookupRequestWriter      BuiltinEndpointSet = 1 << 12
	BuiltinTypeLookupRequestReader      BuiltinEndpointSet = 1 << 13
	BuiltinTypeLookupReplyWriter        BuiltinEndpointSet = 1 << 14
	BuiltinTypeLookupReplyReader        BuiltinEndpointSet = 1 << 15

	// BuiltinEndpointsMinimal is SPDP plus SEDP publications and
	// subscriptions, both directions (0x3f): what nros advertises.
	BuiltinEndpointsMinimal BuiltinEndpointSet = 0x3f
)

// DefaultLeaseDuration is the spec default participant lease (100 s),
// used when PID_PARTICIPANT_LEASE_DURATION is absent.
var DefaultLeaseDuration = Duration{Seconds: 100}

// ParticipantData is the SPDP participant announcement
// (SPDPdiscoveredParticipantData). Decode copies everything out of the
// payload, so a decoded value may be kept.
type ParticipantData struct {
	ProtocolVersion  ProtocolVersion
	VendorID         VendorID
	GuidPrefix       GuidPrefix // from PID_PARTICIPANT_GUID (entity 000001c1)
	ExpectsInlineQos bool

	DefaultUnicastLocators       []Locator
	DefaultMulticastLocators     []Locator
	MetatrafficUnicastLocators   []Locator
	MetatrafficMulticastLocators []Locator

	BuiltinEndpoints      BuiltinEndpointSet
	LeaseDuration         Duration
	ManualLivelinessCount Count

	// UserData is the raw USER_DATA octets, e.g. "enclave=/;" (Fast DDS
	// adds a trailing NUL). Nil means absent.
	UserData   []byte
	EntityName string

	HasDomainID bool
	DomainID    uint32
	// DomainTag must be empty to talk to default peers; do not set it.
	DomainTag string

	// Properties, when non-nil (even empty), are sent as
	// PID_PROPERTY_LIST, which Cyclone DDS and Fast DDS both always send
	// (process and host names). Decode does not read them back: received
	// property lists are skipped.
	Properties []Property

	// Security holds the DDS Security parameters (ids 0x1000..0x1fff:
	// identity and permissions tokens, participant security info). Encode
	// writes each value as given (little endian, the caller's encoding);
	// Decode collects them, SecurityBigEndian telling their byte order.
	Security          []Parameter
	SecurityBigEndian bool
}

// Parameter is one raw parameter of a parameter list.
type Parameter struct {
	ID    ParameterID
	Value []byte
}

// IsSecurityPID reports whether pid is one of the DDS Security parameter
// ids (0x1000..0x1fff).
func IsSecurityPID(pid ParameterID) bool {
	return pid >= 0x1000 && pid < 0x2000
}

// FindSecurity returns the value of the security parameter pid, if present.
func FindSecurity(ps []Parameter, pid ParameterID) ([]byte, bool) {
	for _, p := range ps {
		if p.ID == pid {
			return p.Value, true
		}
	}
	return nil, false
}

// padded copies a parameter value, padded with zeros to a multiple of 4
// (as Encode writes it).
func padded(v []byte) []byte {
	out := make([]byte, (len(v)+3)&^3)
	copy(out, v)
	return out
}

// Property is one name/value pair of PID_PROPERTY_LIST.
type Property struct{ Name, Value string }

// GUID returns the participant GUID (prefix + ENTITYID_PARTICIPANT).
func (p *ParticipantData) GUID() GUID { return GUID{Prefix: p.GuidPrefix, Entity: EntityIDParticipant} }

// Enclave returns the value of the "enclave" key in UserData.
func (p *ParticipantData) Enclave() (string, bool) { return UserDataValue(p.UserData, "enclave") }

// Validate checks what Cyclone requires of an SPDP sample: a participant
// GUID. (Fast DDS also needs a non-zero lease duration.)
func (p *ParticipantData) Validate() error {
	if p.GuidPrefix.IsZero() {
		return fmt.Errorf("%w: SPDP without PARTICIPANT_GUID", ErrBadParameter)
	}
	return nil
}

// ReliabilityKind is the RELIABILITY QoS kind, with its wire values.
type ReliabilityKind uint32

// Reliability kinds (wire values; the DDS API enum differs).
const (
	ReliabilityBestEffort ReliabilityKind = 1
	ReliabilityReliable   ReliabilityKind = 2
)

// Reliability is the RELIABILITY QoS policy.
type Reliability struct {
	Kind            ReliabilityKind
	MaxBlockingTime Duration
}

// DurabilityKind is the DURABILITY QoS kind.
type DurabilityKind uint32

// Durability kinds.
const (
	DurabilityVolatile       DurabilityKind = 0
	DurabilityTransientLocal DurabilityKind = 1
	DurabilityTransient      DurabilityKind = 2
	DurabilityPersistent     DurabilityKind = 3
)

// HistoryKind is the HISTORY QoS kind.
type HistoryKind uint32

// History kinds.
const (
	HistoryKeepLast HistoryKind = 0
	HistoryKeepAll  HistoryKind = 1
)

// History is the HISTORY QoS policy.
type History struct {
	Kind  HistoryKind
	Depth int32
}

// LivelinessKind is the LIVELINESS QoS kind.
type LivelinessKind uint32

// Liveliness kinds.
const (
	LivelinessAutomatic           LivelinessKind = 0
	LivelinessManualByParticipant LivelinessKind = 1
	LivelinessManualByTopic       LivelinessKind = 2
)

// Liveliness is the LIVELINESS QoS policy.
type Liveliness struct {
	Kind          LivelinessKind
	LeaseDuration Duration
}

// OwnershipKind is the OWNERSHIP QoS kind.
type OwnershipKind uint32

// Ownership kinds.
const (
	OwnershipShared    OwnershipKind = 0
	OwnershipExclusive OwnershipKind = 1
)

// DestinationOrderKind is the DESTINATION_ORDER QoS kind.
type DestinationOrderKind uint32

// Destination order kinds.
const (
	DestinationOrderByReception DestinationOrderKind = 0
	DestinationOrderBySource    DestinationOrderKind = 1
)

// PresentationAccessScope is the PRESENTATION access scope.
type PresentationAccessScope uint32

// Presentation access scopes.
const (
	PresentationInstance PresentationAccessScope = 0
	PresentationTopic    PresentationAccessScope = 1
	PresentationGroup    PresentationAccessScope = 2
)

// Presentation is the PRESENTATION QoS policy.
type Presentation struct {
	AccessScope    PresentationAccessScope
	CoherentAccess bool
	OrderedAccess  bool
}

// Data representation ids (DATA_REPRESENTATION).
const (
	DataRepresentationXCDR1 int16 = 0
	DataRepresentationXML   int16 = 1
	DataRepresentationXCDR2 int16 = 2
)

// TypeConsistency is the DDS-XTypes TYPE_CONSISTENCY_ENFORCEMENT policy.
type TypeConsistency struct {
	Kind                 uint16 // 0 DISALLOW_TYPE_COERCION, 1 ALLOW_TYPE_COERCION
	IgnoreSequenceBounds bool
	IgnoreStringBounds   bool
	IgnoreMemberNames    bool
	PreventTypeWidening  bool
	ForceTypeValidation  bool
}

// EndpointData is an SEDP publication or subscription announcement
// (DiscoveredWriterData / DiscoveredReaderData). Start from
// NewEndpointData so that unset policies hold the spec defaults; Decode
// does the same before reading, since Cyclone omits every default policy.
// Decode copies everything out of the payload.
type EndpointData struct {
	ProtocolVersion ProtocolVersion // zero if absent
	VendorID        VendorID        // zero if absent

	EndpointGUID    GUID
	ParticipantGUID GUID // zero if absent (derive it from EndpointGUID)
	TopicName       string
	TypeName        string

	Reliability       Reliability
	Durability        DurabilityKind
	History           History
	Deadline          Duration
	LatencyBudget     Duration
	Liveliness        Liveliness
	Lifespan          Duration
	Ownership         OwnershipKind
	OwnershipStrength int32
	DestinationOrder  DestinationOrderKind
	Presentation      Presentation
	Partitions        []string
	UserData          []byte // nil if absent
	TopicData         []byte // nil if absent
	GroupData         []byte // nil if absent
	// DataRepresentation lists the representation ids; nil means absent,
	// which means [XCDR1].
	DataRepresentation []int16

	UnicastLocators   []Locator
	MulticastLocators []Locator

	HasTypeConsistency bool
	TypeConsistency    TypeConsistency

	ExpectsInlineQos bool

	// Security holds the DDS Security parameters (PID_ENDPOINT_SECURITY_INFO
	// and the like), as in ParticipantData.
	Security          []Parameter
	SecurityBigEndian bool
}

// NewEndpointData returns an EndpointData holding the spec defaults for a
// writer or a reader (they differ in reliability: writers default to
// RELIABLE, readers to BEST_EFFORT; max_blocking_time 100 ms).
func NewEndpointData(writer bool) EndpointData {
	e := EndpointData{
		Reliability:      Reliability{Kind: ReliabilityBestEffort, MaxBlockingTime: DurationFromTime(100 * time.Millisecond)},
		Durability:       DurabilityVolatile,
		History:          History{Kind: HistoryKeepLast, Depth: 1},
		Deadline:         DurationInfinite,
		LatencyBudget:    DurationZero,
		Liveliness:       Liveliness{Kind: LivelinessAutomatic, LeaseDuration: DurationInfinite},
		Lifespan:         DurationInfinite,
		Ownership:        OwnershipShared,
		DestinationOrder: DestinationOrderByReception,
		Presentation:     Presentation{AccessScope: PresentationInstance},
	}
	if writer {
		e.Reliability.Kind = ReliabilityReliable
	}
	return e
}

// Validate checks the fields Cyclone requires of an SEDP sample: endpoint
// GUID, topic and type names, and a participant GUID (if present) that
// matches the endpoint's prefix.
func (e *EndpointData) Validate() error {
	switch {
	case e.EndpointGUID.IsZero():
		return fmt.Errorf("%w: SEDP without ENDPOINT_GUID", ErrBadParameter)
	case e.TopicName == "":
		return fmt.Errorf("%w: SEDP without TOPIC_NAME", ErrBadParameter)
	case e.TypeName == "":
		return fmt.Errorf("%w: SEDP without TYPE_NAME", ErrBadParameter)
	case !e.ParticipantGUID.IsZero() && e.ParticipantGUID != (GUID{Prefix: e.EndpointGUID.Prefix, Entity: EntityIDParticipant}):
		return fmt.Errorf("%w: PARTICIPANT_GUID does not match ENDPOINT_GUID", ErrBadParameter)
	}
	return nil
}

// UserDataValue returns the value of key in ROS-style "k1=v1;k2=v2;" user
// data. A trailing NUL (as Fast DDS sends) is accepted.
func UserDataValue(ud []byte, key string) (string, bool) {
	ud = bytes.TrimRight(ud, "\x00")
	for len(ud) > 0 {
		pair := ud
		if i := bytes.IndexByte(ud, ';'); i >= 0 {
			pair, ud = ud[:i], ud[i+1:]
		} else {
			ud = nil
		}
		if k, v, ok := bytes.Cut(pair, []byte{'='}); ok && string(k) == key {
			return string(v), true
		}
	}
	return "", false
}

// --- decoding helpers ---

type plReader struct {
	bo binary.ByteOrder
}

func badParam(pid ParameterID, what string) error {
	return fmt.Errorf("%w: PID 0x%04x: %s", ErrBadParameter, uint16(pid), what)
}

func (r plReader) u32(pid ParameterID, v []byte) (uint32, error) {
	if len(v) < 4 {
		return 0, badParam(pid, "short")
	}
	return r.bo.Uint32(v), nil
}

func (r plReader) duration(pid ParameterID, v []byte) (Duration, error) {
	if len(v) < 8 {
		return Duration{}, badParam(pid, "short duration")
	}
	return Duration{Seconds: int32(r.bo.Uint32(v)), Fraction: r.bo.Uint32(v[4:])}, nil
}

func (r plReader) locator(pid ParameterID, v []byte) (Locator, error) {
	if len(v) < 24 {
		return Locator{}, badParam(pid, "short locator")
	}
	return readLocator(r.bo, v), nil
}

func guid16(pid ParameterID, v []byte) (GUID, error) {
	if len(v) < 16 {
		return GUID{}, badParam(pid, "short GUID")
	}
	return GUIDFromBytes([16]byte(v[:16])), nil
}

// str reads a CDR string (u32 length including NUL, bytes, NUL) and
// returns it with the number of bytes used, unpadded.
func (r plReader) str(pid ParameterID, v []byte) (string, int, error) {
	if len(v) < 4 {
		return "", 0, badParam(pid, "short string")
	}
	n := r.bo.Uint32(v)
	if uint64(n) > uint64(len(v)-4) {
		return "", 0, badParam(pid, "string length")
	}
	s := v[4 : 4+n]
	if n > 0 && s[n-1] == 0 {
		s = s[:n-1]
	}
	return string(s), 4 + int(n), nil
}

func (r plReader) octets(pid ParameterID, v []byte) ([]byte, error) {
	if len(v) < 4 {
		return nil, badParam(pid, "short octet sequence")
	}
	n := r.bo.Uint32(v)
	if uint64(n) > uint64(len(v)-4) {
		return nil, badParam(pid, "octet sequence length")
	}
	return bytes.Clone(v[4 : 4+n : 4+n])[:n:n], nil
}

// Decode parses an SPDP payload (with its PL_CDR encapsulation header)
// into p, replacing its contents. Missing PIDs keep the spec defaults
// (lease 100 s). Without PARTICIPANT_GUID the prefix is taken from a
// KEY_HASH parameter in the payload, if any. It fails on framing errors, malformed known PIDs and
// unknown must-understand PIDs; it does not check required PIDs (see
// Validate).
func (p *ParticipantData) Decode(payload []byte) error {
	pl, err := ParsePLPayload(payload)
	if err != nil {
		return err
	}
	*p = ParticipantData{LeaseDuration: DefaultLeaseDuration}
	r := plReader{bo: pl.Order()}
	haveBES, haveGUID := false, false
	it := pl.Iter()
	for {
		pid, v, ok := it.Next()
		if !ok {
			break
		}
		switch pid {
		case PIDProtocolVersion:
			if len(v) < 2 {
				return badParam(pid, "short")
			}
			p.ProtocolVersion = ProtocolVersion{v[0], v[1]}
		case PIDVendorID:
			if len(v) < 2 {
				return badParam(pid, "short")
			}
			p.VendorID = VendorID{v[0], v[1]}
		case PIDParticipantGUID, PIDKeyHash:
			g, err := guid16(pid, v)
			if err != nil {
				return err
			}
			// PARTICIPANT_GUID wins over a KEY_HASH in the payload.
			if pid == PIDParticipantGUID || !haveGUID {
				p.GuidPrefix = g.Prefix
			}
			haveGUID = haveGUID || pid == PIDParticipantGUID
		case PIDExpectsInlineQos:
			if len(v) < 1 {
				return badParam(pid, "short")
			}
			p.ExpectsInlineQos = v[0] != 0
		case PIDDefaultUnicastLocator, PIDDefaultMulticastLocator, PIDMetatrafficUnicastLocator, PIDMetatrafficMulticastLocator:
			l, err := r.locator(pid, v)
			if err != nil {
				return err
			}
			switch pid {
			case PIDDefaultUnicastLocator:
				p.DefaultUnicastLocators = append(p.DefaultUnicastLocators, l)
			case PIDDefaultMulticastLocator:
				p.DefaultMulticastLocators = append(p.DefaultMulticastLocators, l)
			case PIDMetatrafficUnicastLocator:
				p.MetatrafficUnicastLocators = append(p.MetatrafficUnicastLocators, l)
			default:
				p.MetatrafficMulticastLocators = append(p.MetatrafficMulticastLocators, l)
			}
		case PIDBuiltinEndpointSet, PIDParticipantBuiltinEndpoints:
			u, err := r.u32(pid, v)
			if err != nil {
				return err
			}
			if pid == PIDBuiltinEndpointSet || !haveBES {
				p.BuiltinEndpoints = BuiltinEndpointSet(u)
			}
			haveBES = haveBES || pid == PIDBuiltinEndpointSet
		case PIDParticipantLeaseDuration:
			if p.LeaseDuration, err = r.duration(pid, v); err != nil {
				return err
			}
		case PIDParticipantManualLivelinessCount:
			u, err := r.u32(pid, v)
			if err != nil {
				return err
			}
			p.ManualLivelinessCount = Count(u)
		case PIDUserData:
			if p.UserData, err = r.octets(pid, v); err != nil {
				return err
			}
		case PIDEntityName:
			if p.EntityName, _, err = r.str(pid, v); err != nil {
				return err
			}
		case PIDDomainID:
			u, err := r.u32(pid, v)
			if err != nil {
				return err
			}
			p.HasDomainID, p.DomainID = true, u
		case PIDDomainTag:
			if p.DomainTag, _, err = r.str(pid, v); err != nil {
				return err
			}
		default:
			if IsSecurityPID(pid) {
				p.Security = append(p.Security, Parameter{ID: pid, Value: padded(v)})
				p.SecurityBigEndian = pl.Order() == binary.BigEndian
				continue
			}
			if pid.MustUnderstand() {
				return fmt.Errorf("%w: 0x%04x", ErrMustUnderstand, uint16(pid))
			}
		}
	}
	return it.Err()
}

// Decode parses an SEDP payload (with its PL_CDR encapsulation header)
// into e, replacing its contents. writer says whether the sample came
// from the publications writer (which selects the reliability default).
// Without ENDPOINT_GUID the GUID is taken from a KEY_HASH parameter in the
// payload, if any (a KEY_HASH in the inline QoS is the caller's business).
// It fails on framing errors, malformed known PIDs, reliability kinds
// other than 1 and 2, and unknown must-understand PIDs; it does not check
// required PIDs (see Validate).
func (e *EndpointData) Decode(payload []byte, writer bool) error {
	pl, err := ParsePLPayload(payload)
	if err != nil {
		return err
	}
	*e = NewEndpointData(writer)
	r := plReader{bo: pl.Order()}
	haveGUID := false
	it := pl.Iter()
	for {
		pid, v, ok := it.Next()
		if !ok {
			break
		}
		switch pid {
		case PIDProtocolVersion:
			if len(v) < 2 {
				return badParam(pid, "short")
			}
			e.ProtocolVersion = ProtocolVersion{v[0], v[1]}
		case PIDVendorID:
			if len(v) < 2 {
				return badParam(pid, "short")
			}
			e.VendorID = VendorID{v[0], v[1]}
		case PIDEndpointGUID, PIDKeyHash:
			g, err := guid16(pid, v)
			if err != nil {
				return err
			}
			// ENDPOINT_GUID wins over a KEY_HASH in the payload (Fast DDS
			// accepts either).
			if pid == PIDEndpointGUID || !haveGUID {
				e.EndpointGUID = g
			}
			haveGUID = haveGUID || pid == PIDEndpointGUID
		case PIDParticipantGUID:
			if e.ParticipantGUID, err = guid16(pid, v); err != nil {
				return err
			}
		case PIDTopicName:
			if e.TopicName, _, err = r.str(pid, v); err != nil {
				return err
			}
		case PIDTypeName:
			if e.TypeName, _, err = r.str(pid, v); err != nil {
				return err
			}
		case PIDReliability:
			if len(v) < 12 {
				// Some stacks send only the kind.
				if len(v) < 4 {
					return badParam(pid, "short")
				}
			} else if e.Reliability.MaxBlockingTime, err = r.duration(pid, v[4:]); err != nil {
				return err
			}
			k := ReliabilityKind(r.bo.Uint32(v))
			if k != ReliabilityBestEffort && k != ReliabilityReliable {
				return badParam(pid, fmt.Sprintf("reliability kind %d", k))
			}
			e.Reliability.Kind = k
		case PIDDurability:
			u, err := r.u32(pid, v)
			if err != nil {
				return err
			}
			if u > uint32(DurabilityPersistent) {
				return badParam(pid, fmt.Sprintf("durability kind %d", u))
			}
			e.Durability = DurabilityKind(u)
		case PIDHistory:
			if len(v) < 8 {
				return badParam(pid, "short")
			}
			k := HistoryKind(r.bo.Uint32(v))
			if k > HistoryKeepAll {
				return badParam(pid, fmt.Sprintf("history kind %d", k))
			}
			e.History = History{Kind: k, Depth: int32(r.bo.Uint32(v[4:]))}
		case PIDDeadline:
			if e.Deadline, err = r.duration(pid, v); err != nil {
				return err
			}
		case PIDLatencyBudget:
			if e.LatencyBudget, err = r.duration(pid, v); err != nil {
				return err
			}
		case PIDLiveliness:
			if len(v) < 12 {
				return badParam(pid, "short")
			}
			k := LivelinessKind(r.bo.Uint32(v))
			if k > LivelinessManualByTopic {
				return badParam(pid, fmt.Sprintf("liveliness kind %d", k))
			}
			d, _ := r.duration(pid, v[4:])
			e.Liveliness = Liveliness{Kind: k, LeaseDuration: d}
		case PIDLifespan:
			if e.Lifespan, err = r.duration(pid, v); err != nil {
				return err
			}
		case PIDOwnership:
			u, err := r.u32(pid, v)
			if err != nil {
				return err
			}
			if u > uint32(OwnershipExclusive) {
				return badParam(pid, fmt.Sprintf("ownership kind %d", u))
			}
			e.Ownership = OwnershipKind(u)
		case PIDOwnershipStrength:
			u, err := r.u32(pid, v)
			if err != nil {
				return err
			}
			e.OwnershipStrength = int32(u)
		case PIDDestinationOrder:
			u, err := r.u32(pid, v)
			if err != nil {
				return err
			}
			if u > uint32(DestinationOrderBySource) {
				return badParam(pid, fmt.Sprintf("destination order kind %d", u))
			}
			e.DestinationOrder = DestinationOrderKind(u)
		case PIDPresentation:
			if len(v) < 6 {
				return badParam(pid, "short")
			}
			s := PresentationAccessScope(r.bo.Uint32(v))
			if s > PresentationGroup {
				return badParam(pid, fmt.Sprintf("presentation scope %d", s))
			}
			e.Presentation = Presentation{AccessScope: s, CoherentAccess: v[4] != 0, OrderedAccess: v[5] != 0}
		case PIDPartition:
			if e.Partitions, err = r.strings(pid, v); err != nil {
				return err
			}
		case PIDUserData:
			if e.UserData, err = r.octets(pid, v); err != nil {
				return err
			}
		case PIDTopicData:
			if e.TopicData, err = r.octets(pid, v); err != nil {
				return err
			}
		case PIDGroupData:
			if e.GroupData, err = r.octets(pid, v); err != nil {
				return err
			}
		case PIDDataRepresentation:
			u, err := r.u32(pid, v)
			if err != nil {
				return err
			}
			if uint64(u)*2 > uint64(len(v)-4) {
				return badParam(pid, "sequence length")
			}
			e.DataRepresentation = make([]int16, u)
			for i := range e.DataRepresentation {
				e.DataRepresentation[i] = int16(r.bo.Uint16(v[4+2*i:]))
			}
		case PIDUnicastLocator, PIDMulticastLocator:
			l, err := r.locator(pid, v)
			if err != nil {
				return err
			}
			if pid == PIDUnicastLocator {
				e.UnicastLocators = append(e.UnicastLocators, l)
			} else {
				e.MulticastLocators = append(e.MulticastLocators, l)
			}
		case PIDTypeConsistencyEnforcement:
			if len(v) < 2 {
				return badParam(pid, "short")
			}
			tc := TypeConsistency{Kind: r.bo.Uint16(v)}
			flag := func(i int) bool { return len(v) > i && v[i] != 0 }
			tc.IgnoreSequenceBounds = flag(2)
			tc.IgnoreStringBounds = flag(3)
			tc.IgnoreMemberNames = flag(4)
			tc.PreventTypeWidening = flag(5)
			tc.ForceTypeValidation = flag(6)
			e.HasTypeConsistency, e.TypeConsistency = true, tc
		case PIDExpectsInlineQos:
			if len(v) < 1 {
				return badParam(pid, "short")
			}
			e.ExpectsInlineQos = v[0] != 0
		default:
			if IsSecurityPID(pid) {
				e.Security = append(e.Security, Parameter{ID: pid, Value: padded(v)})
				e.SecurityBigEndian = pl.Order() == binary.BigEndian
				continue
			}
			if pid.MustUnderstand() {
				return fmt.Errorf("%w: 0x%04x", ErrMustUnderstand, uint16(pid))
			}
		}
	}
	return it.Err()
}

// strings reads a CDR sequence of strings (PARTITION).
func (r plReader) strings(pid ParameterID, v []byte) ([]string, error) {
	if len(v) < 4 {
		return nil, badParam(pid, "short")
	}
	n := r.bo.Uint32(v)
	// Each string takes at least 4 bytes.
	if uint64(n)*4 > uint64(len(v)-4) {
		return nil, badParam(pid, "sequence length")
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]string, 0, n)
	off := 4
	for range n {
		off = (off + 3) &^ 3
		if off > len(v) {
			return nil, badParam(pid, "short")
		}
		s, used, err := r.str(pid, v[off:])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
		off += used
	}
	return out, nil
}

// --- encoding helpers (little endian) ---

type plWriter struct {
	buf []byte
	err error
}

// param appends a parameter whose value is produced by fill.
func (w *plWriter) begin(pid ParameterID) int {
	at := len(w.buf)
	w.buf = le.AppendUint16(w.buf, uint16(pid))
	w.buf = le.AppendUint16(w.buf, 0)
	return at
}

func (w *plWriter) end(at int) {
	w.buf = appendZeros(w.buf, (4-(len(w.buf)-at)%4)%4)
	n := len(w.buf) - at - 4
	if n > 0xffff {
		if w.err == nil {
			w.err = fmt.Errorf("%w: parameter 0x%04x is %d bytes", ErrTooLarge, le.Uint16(w.buf[at:]), n)
		}
		w.buf = w.buf[:at]
		return
	}
	le.PutUint16(w.buf[at+2:], uint16(n))
}

// raw writes parameters whose values are already encoded.
func (w *plWriter) raw(ps []Parameter) {
	for _, p := range ps {
		at := w.begin(p.ID)
		w.buf = append(w.buf, p.Value...)
		w.end(at)
	}
}

func (w *plWriter) u32(pid ParameterID, v uint32) {
	at := w.begin(pid)
	w.buf = le.AppendUint32(w.buf, v)
	w.end(at)
}

func (w *plWriter) duration(pid ParameterID, d Duration) {
	at := w.begin(pid)
	w.buf = le.AppendUint32(w.buf, uint32(d.Seconds))
	w.buf = le.AppendUint32(w.buf, d.Fraction)
	w.end(at)
}

func (w *plWriter) guid(pid ParameterID, g GUID) {
	at := w.begin(pid)
	w.buf = append(w.buf, g.Prefix[:]...)
	w.buf = append(w.buf, g.Entity[:]...)
	w.end(at)
}

func (w *plWriter) locator(pid ParameterID, l Locator) {
	at := w.begin(pid)
	w.buf = appendLocator(w.buf, l)
	w.end(at)
}

func appendCDRString(dst []byte, s string) []byte {
	dst = le.AppendUint32(dst, uint32(len(s)+1))
	dst = append(dst, s...)
	return append(dst, 0)
}

func (w *plWriter) str(pid ParameterID, s string) {
	if len(s) > math.MaxUint16 {
		w.err = fmt.Errorf("%w: string parameter 0x%04x", ErrTooLarge, uint16(pid))
		return
	}
	at := w.begin(pid)
	w.buf = appendCDRString(w.buf, s)
	w.end(at)
}

func (w *plWriter) octets(pid ParameterID, b []byte) {
	if len(b) > math.MaxUint16 {
		w.err = fmt.Errorf("%w: octets parameter 0x%04x", ErrTooLarge, uint16(pid))
		return
	}
	at := w.begin(pid)
	w.buf = le.AppendUint32(w.buf, uint32(len(b)))
	w.buf = append(w.buf, b...)
	w.end(at)
}

func (w *plWriter) version(v ProtocolVersion) {
	at := w.begin(PIDProtocolVersion)
	w.buf = append(w.buf, v.Major, v.Minor)
	w.end(at)
}

func (w *plWriter) vendor(v VendorID) {
	at := w.begin(PIDVendorID)
	w.buf = append(w.buf, v[0], v[1])
	w.end(at)
}

func plcdrLEHeader(dst []byte) []byte { return append(dst, 0x00, 0x03, 0x00, 0x00) }

// Encode appends p as a PL_CDR_LE SPDP payload (encapsulation header,
// parameters, sentinel) to dst. It writes PROTOCOL_VERSION, VENDORID,
// PARTICIPANT_GUID, BUILTIN_ENDPOINT_SET and PARTICIPANT_LEASE_DURATION
// always (Fast DDS needs the lease), then DOMAIN_ID if HasDomainID, the
// locators (metatraffic unicast, default unicast, metatraffic multicast,
// default multicast), USER_DATA if non-nil, ENTITY_NAME and DOMAIN_TAG if
// non-empty, and EXPECTS_INLINE_QOS if set.
func (p *ParticipantData) Encode(dst []byte) ([]byte, error) {
	w := plWriter{buf: plcdrLEHeader(dst)}
	w.version(p.ProtocolVersion)
	w.vendor(p.VendorID)
	w.guid(PIDParticipantGUID, p.GUID())
	w.duration(PIDParticipantLeaseDuration, p.LeaseDuration)
	w.u32(PIDBuiltinEndpointSet, uint32(p.BuiltinEndpoints))
	if p.HasDomainID {
		w.u32(PIDDomainID, p.DomainID)
	}
	for _, l := range p.MetatrafficUnicastLocators {
		w.locator(PIDMetatrafficUnicastLocator, l)
	}
	for _, l := range p.DefaultUnicastLocators {
		w.locator(PIDDefaultUnicastLocator, l)
	}
	for _, l := range p.MetatrafficMulticastLocators {
		w.locator(PIDMetatrafficMulticastLocator, l)
	}
	for _, l := range p.DefaultMulticastLocators {
		w.locator(PIDDefaultMulticastLocator, l)
	}
	if p.ManualLivelinessCount != 0 {
		w.u32(PIDParticipantManualLivelinessCount, uint32(p.ManualLivelinessCount))
	}
	if p.UserData != nil {
		w.octets(PIDUserData, p.UserData)
	}
	if p.Properties != nil {
		at := w.begin(PIDPropertyList)
		w.buf = le.AppendUint32(w.buf, uint32(len(p.Properties)))
		for _, pr := range p.Properties {
			for _, str := range [2]string{pr.Name, pr.Value} {
				w.buf = appendZeros(w.buf, (4-(len(w.buf)-at)%4)%4)
				w.buf = appendCDRString(w.buf, str)
			}
		}
		w.end(at)
	}
	if p.EntityName != "" {
		w.str(PIDEntityName, p.EntityName)
	}
	if p.DomainTag != "" {
		w.str(PIDDomainTag, p.DomainTag)
	}
	if p.ExpectsInlineQos {
		at := w.begin(PIDExpectsInlineQos)
		w.buf = append(w.buf, 1)
		w.end(at)
	}
	w.raw(p.Security)
	if w.err != nil {
		return dst, w.err
	}
	return AppendSentinel(w.buf), nil
}

// Encode appends e as a PL_CDR_LE SEDP payload to dst: TOPIC_NAME and
// TYPE_NAME first, then the QoS, then PROTOCOL_VERSION and VENDORID (when
// non-zero), ENDPOINT_GUID and PARTICIPANT_GUID (when non-zero), in the
// order Cyclone DDS uses. ENDPOINT_GUID, TOPIC_NAME, TYPE_NAME,
// RELIABILITY, DURABILITY and HISTORY are always written; every other
// policy only when it differs from the default (NewEndpointData).
// Locators, PARTITION, USER_DATA, TOPIC_DATA, GROUP_DATA and
// DATA_REPRESENTATION are written when non-empty.
func (e *EndpointData) Encode(dst []byte) ([]byte, error) {
	def := NewEndpointData(true)
	w := plWriter{buf: plcdrLEHeader(dst)}
	w.str(PIDTopicName, e.TopicName)
	w.str(PIDTypeName, e.TypeName)
	at := w.begin(PIDReliability)
	w.buf = le.AppendUint32(w.buf, uint32(e.Reliability.Kind))
	w.buf = le.AppendUint32(w.buf, uint32(e.Reliability.MaxBlockingTime.Seconds))
	w.buf = le.AppendUint32(w.buf, e.Reliability.MaxBlockingTime.Fraction)
	w.end(at)
	w.u32(PIDDurability, uint32(e.Durability))
	at = w.begin(PIDHistory)
	w.buf = le.AppendUint32(w.buf, uint32(e.History.Kind))
	w.buf = le.AppendUint32(w.buf, uint32(e.History.Depth))
	w.end(at)
	if e.Deadline != def.Deadline {
		w.duration(PIDDeadline, e.Deadline)
	}
	if e.LatencyBudget != def.LatencyBudget {
		w.duration(PIDLatencyBudget, e.LatencyBudget)
	}
	if e.Liveliness != def.Liveliness {
		at = w.begin(PIDLiveliness)
		w.buf = le.AppendUint32(w.buf, uint32(e.Liveliness.Kind))
		w.buf = le.AppendUint32(w.buf, uint32(e.Liveliness.LeaseDuration.Seconds))
		w.buf = le.AppendUint32(w.buf, e.Liveliness.LeaseDuration.Fraction)
		w.end(at)
	}
	if e.Lifespan != def.Lifespan {
		w.duration(PIDLifespan, e.Lifespan)
	}
	if e.Ownership != def.Ownership {
		w.u32(PIDOwnership, uint32(e.Ownership))
	}
	if e.OwnershipStrength != 0 {
		w.u32(PIDOwnershipStrength, uint32(e.OwnershipStrength))
	}
	if e.DestinationOrder != def.DestinationOrder {
		w.u32(PIDDestinationOrder, uint32(e.DestinationOrder))
	}
	if e.Presentation != def.Presentation {
		at = w.begin(PIDPresentation)
		w.buf = le.AppendUint32(w.buf, uint32(e.Presentation.AccessScope))
		w.buf = append(w.buf, b2u(e.Presentation.CoherentAccess), b2u(e.Presentation.OrderedAccess))
		w.end(at)
	}
	if len(e.Partitions) > 0 {
		at = w.begin(PIDPartition)
		w.buf = le.AppendUint32(w.buf, uint32(len(e.Partitions)))
		for _, s := range e.Partitions {
			w.buf = appendZeros(w.buf, (4-(len(w.buf)-at)%4)%4)
			w.buf = appendCDRString(w.buf, s)
		}
		w.end(at)
	}
	if e.UserData != nil {
		w.octets(PIDUserData, e.UserData)
	}
	if e.TopicData != nil {
		w.octets(PIDTopicData, e.TopicData)
	}
	if e.GroupData != nil {
		w.octets(PIDGroupData, e.GroupData)
	}
	if e.DataRepresentation != nil {
		at = w.begin(PIDDataRepresentation)
		w.buf = le.AppendUint32(w.buf, uint32(len(e.DataRepresentation)))
		for _, d := range e.DataRepresentation {
			w.buf = le.AppendUint16(w.buf, uint16(d))
		}
		w.end(at)
	}
	for _, l := range e.UnicastLocators {
		w.locator(PIDUnicastLocator, l)
	}
	for _, l := range e.MulticastLocators {
		w.locator(PIDMulticastLocator, l)
	}
	if e.HasTypeConsistency {
		tc := e.TypeConsistency
		at = w.begin(PIDTypeConsistencyEnforcement)
		w.buf = le.AppendUint16(w.buf, tc.Kind)
		w.buf = append(w.buf, b2u(tc.IgnoreSequenceBounds), b2u(tc.IgnoreStringBounds), b2u(tc.IgnoreMemberNames),
			b2u(tc.PreventTypeWidening), b2u(tc.ForceTypeValidation))
		w.end(at)
	}
	if e.ExpectsInlineQos {
		at = w.begin(PIDExpectsInlineQos)
		w.buf = append(w.buf, 1)
		w.end(at)
	}
	// The endpoint's identity comes after its QoS, as Cyclone DDS writes
	// it (Fast DDS also puts TOPIC_NAME and TYPE_NAME before
	// PROTOCOL_VERSION and VENDORID).
	if e.ProtocolVersion != (ProtocolVersion{}) {
		w.version(e.ProtocolVersion)
	}
	if e.VendorID != (VendorID{}) {
		w.vendor(e.VendorID)
	}
	w.guid(PIDEndpointGUID, e.EndpointGUID)
	if !e.ParticipantGUID.IsZero() {
		w.guid(PIDParticipantGUID, e.ParticipantGUID)
	}
	w.raw(e.Security)
	if w.err != nil {
		return dst, w.err
	}
	return AppendSentinel(w.buf), nil
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}
