package access

import (
	"encoding/binary"
	"fmt"
)

// Attribute mask bits of PID_PARTICIPANT_SECURITY_INFO (0x1005) and
// PID_ENDPOINT_SECURITY_INFO (0x1004), DDS Security 1.1 §7.4.1.5/§7.4.1.6
// and §9.4.2.4/§9.4.2.5 for the builtin plugins.
const (
	ParticipantIsRTPSProtected       uint32 = 1 << 0
	ParticipantIsDiscoveryProtected  uint32 = 1 << 1
	ParticipantIsLivelinessProtected uint32 = 1 << 2
	// AttributesIsValid is set in every mask that carries information.
	AttributesIsValid uint32 = 1 << 31

	PluginParticipantIsRTPSEncrypted                 uint32 = 1 << 0
	PluginParticipantIsDiscoveryEncrypted            uint32 = 1 << 1
	PluginParticipantIsLivelinessEncrypted           uint32 = 1 << 2
	PluginParticipantIsRTPSOriginAuthenticated       uint32 = 1 << 3
	PluginParticipantIsDiscoveryOriginAuthenticated  uint32 = 1 << 4
	PluginParticipantIsLivelinessOriginAuthenticated uint32 = 1 << 5

	EndpointIsReadProtected       uint32 = 1 << 0
	EndpointIsWriteProtected      uint32 = 1 << 1
	EndpointIsDiscoveryProtected  uint32 = 1 << 2
	EndpointIsSubmessageProtected uint32 = 1 << 3
	EndpointIsPayloadProtected    uint32 = 1 << 4
	EndpointIsKeyProtected        uint32 = 1 << 5
	EndpointIsLivelinessProtected uint32 = 1 << 6

	PluginEndpointIsSubmessageEncrypted           uint32 = 1 << 0
	PluginEndpointIsPayloadEncrypted              uint32 = 1 << 1
	PluginEndpointIsSubmessageOriginAuthenticated uint32 = 1 << 2
)

// ParticipantSecurityInfo is the value of PID_PARTICIPANT_SECURITY_INFO.
type ParticipantSecurityInfo struct {
	Attributes, PluginAttributes uint32
}

// EndpointSecurityInfo is the value of PID_ENDPOINT_SECURITY_INFO, with the
// decoded flags the transport and the crypto plugin act on.
type EndpointSecurityInfo struct {
	Attributes, PluginAttributes uint32
}

// Has reports whether every bit of mask is set in the endpoint attributes.
func (e EndpointSecurityInfo) Has(mask uint32) bool { return e.Attributes&mask == mask }

// PluginHas reports whether every bit of mask is set in the plugin attributes.
func (e EndpointSecurityInfo) PluginHas(mask uint32) bool { return e.PluginAttributes&mask == mask }

func kindBits(k ProtectionKind, protected, enc, auth uint32) (a, p uint32) {
	if k != ProtectionNone {
		a = protected
	}
	if k.Encrypts() {
		p |= enc
	}
	if k.OriginAuthenticated() {
		p |= auth
	}
	return a, p
}

// ParticipantSecurityInfo returns the participant masks the domain rule
// selects.
func (r *DomainRule) ParticipantSecurityInfo() ParticipantSecurityInfo {
	info := ParticipantSecurityInfo{Attributes: AttributesIsValid, PluginAttributes: AttributesIsValid}
	for _, k := range []struct {
		kind                  ProtectionKind
		protected, enc, authn uint32
	}{
		{r.RTPSProtection, ParticipantIsRTPSProtected, PluginParticipantIsRTPSEncrypted, PluginParticipantIsRTPSOriginAuthenticated},
		{r.DiscoveryProtection, ParticipantIsDiscoveryProtected, PluginParticipantIsDiscoveryEncrypted, PluginParticipantIsDiscoveryOriginAuthenticated},
		{r.LivelinessProtection, ParticipantIsLivelinessProtected, PluginParticipantIsLivelinessEncrypted, PluginParticipantIsLivelinessOriginAuthenticated},
	} {
		a, p := kindBits(k.kind, k.protected, k.enc, k.authn)
		info.Attributes |= a
		info.PluginAttributes |= p
	}
	return info
}

// EndpointSecurityInfo returns the masks of a user endpoint on a topic the
// topic rule governs.
func (t *TopicRule) EndpointSecurityInfo() EndpointSecurityInfo {
	info := EndpointSecurityInfo{Attributes: AttributesIsValid, PluginAttributes: AttributesIsValid}
	set := func(c bool, bit uint32) {
		if c {
			info.Attributes |= bit
		}
	}
	set(t.EnableReadAccessControl, EndpointIsReadProtected)
	set(t.EnableWriteAccessControl, EndpointIsWriteProtected)
	set(t.EnableDiscoveryProtection, EndpointIsDiscoveryProtected)
	set(t.EnableLivelinessProtection, EndpointIsLivelinessProtected)
	set(t.MetadataProtection != ProtectionNone, EndpointIsSubmessageProtected)
	set(t.DataProtection != ProtectionNone, EndpointIsPayloadProtected)
	set(t.DataProtection == ProtectionEncrypt, EndpointIsKeyProtected)
	if t.MetadataProtection.Encrypts() {
		info.PluginAttributes |= PluginEndpointIsSubmessageEncrypted
	}
	if t.DataProtection == ProtectionEncrypt {
		info.PluginAttributes |= PluginEndpointIsPayloadEncrypted
	}
	if t.MetadataProtection.OriginAuthenticated() {
		info.PluginAttributes |= PluginEndpointIsSubmessageOriginAuthenticated
	}
	return info
}

// BuiltinEndpoint names the builtin endpoints whose protection the
// governance decides (or that are fixed by the spec).
type BuiltinEndpoint int

// Builtin endpoints.
const (
	// BuiltinPlain: SPDP, SEDP, P2P participant message (not secure).
	BuiltinPlain BuiltinEndpoint = iota
	// BuiltinDiscoverySecure: DCPSParticipantsSecure, DCPSPublicationsSecure,
	// DCPSSubscriptionsSecure (discovery_protection_kind).
	BuiltinDiscoverySecure
	// BuiltinParticipantMessageSecure: liveliness (liveliness_protection_kind).
	BuiltinParticipantMessageSecure
	// BuiltinStateless: DCPSParticipantStatelessMessage (never protected).
	BuiltinStateless
	// BuiltinVolatileSecure: DCPSParticipantVolatileMessageSecure (always
	// submessage-encrypted with the key-exchange key).
	BuiltinVolatileSecure
)

// BuiltinEndpointSecurityInfo returns the masks of a builtin endpoint as
// Cyclone DDS's access control plugin derives them.
func (r *DomainRule) BuiltinEndpointSecurityInfo(b BuiltinEndpoint) EndpointSecurityInfo {
	info := EndpointSecurityInfo{Attributes: AttributesIsValid, PluginAttributes: AttributesIsValid}
	var k ProtectionKind
	switch b {
	case BuiltinDiscoverySecure:
		k = r.DiscoveryProtection
	case BuiltinParticipantMessageSecure:
		k = r.LivelinessProtection
	case BuiltinVolatileSecure:
		info.Attributes |= EndpointIsSubmessageProtected
		info.PluginAttributes |= PluginEndpointIsSubmessageEncrypted
		return info
	default:
		return info
	}
	if k != ProtectionNone {
		info.Attributes |= EndpointIsSubmessageProtected
	}
	if k.Encrypts() {
		info.PluginAttributes |= PluginEndpointIsSubmessageEncrypted
	}
	if k.OriginAuthenticated() {
		info.PluginAttributes |= PluginEndpointIsSubmessageOriginAuthenticated
	}
	return info
}

// Parameter ids of the security information in SPDP and SEDP.
const (
	PIDParticipantSecurityInfo uint16 = 0x1005
	PIDEndpointSecurityInfo    uint16 = 0x1004
)

func putMasks(a, p uint32, littleEndian bool) []byte {
	b := make([]byte, 8)
	if littleEndian {
		binary.LittleEndian.PutUint32(b, a)
		binary.LittleEndian.PutUint32(b[4:], p)
	} else {
		binary.BigEndian.PutUint32(b, a)
		binary.BigEndian.PutUint32(b[4:], p)
	}
	return b
}

func getMasks(b []byte, littleEndian bool) (a, p uint32, err error) {
	if len(b) < 8 {
		return 0, 0, fmt.Errorf("security info of %d bytes, want 8", len(b))
	}
	if littleEndian {
		return binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), nil
	}
	return binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:]), nil
}

// Marshal returns the 8-byte parameter value (attributes, plugin attributes).
func (i ParticipantSecurityInfo) Marshal(littleEndian bool) []byte {
	return putMasks(i.Attributes, i.PluginAttributes, littleEndian)
}

// UnmarshalParticipantSecurityInfo reads a PID_PARTICIPANT_SECURITY_INFO value.
func UnmarshalParticipantSecurityInfo(b []byte, littleEndian bool) (ParticipantSecurityInfo, error) {
	a, p, err := getMasks(b, littleEndian)
	return ParticipantSecurityInfo{a, p}, err
}

// Marshal returns the 8-byte parameter value (attributes, plugin attributes).
func (e EndpointSecurityInfo) Marshal(littleEndian bool) []byte {
	return putMasks(e.Attributes, e.PluginAttributes, littleEndian)
}

// UnmarshalEndpointSecurityInfo reads a PID_ENDPOINT_SECURITY_INFO value.
func UnmarshalEndpointSecurityInfo(b []byte, littleEndian bool) (EndpointSecurityInfo, error) {
	a, p, err := getMasks(b, littleEndian)
	return EndpointSecurityInfo{a, p}, err
}

func compatible(a, b uint32) bool {
	return a == b || a&AttributesIsValid == 0 || b&AttributesIsValid == 0
}

// Compatible reports whether a remote participant's security info matches
// the local one as Cyclone DDS requires before it authenticates: each mask
// equal, unless either side's mask lacks the valid bit (some products send
// none).
func (i ParticipantSecurityInfo) Compatible(remote ParticipantSecurityInfo) bool {
	return compatible(i.Attributes, remote.Attributes) && compatible(i.PluginAttributes, remote.PluginAttributes)
}

// Compatible is ParticipantSecurityInfo.Compatible for endpoints.
func (e EndpointSecurityInfo) Compatible(remote EndpointSecurityInfo) bool {
	return compatible(e.Attributes, remote.Attributes) && compatible(e.PluginAttributes, remote.PluginAttributes)
}
