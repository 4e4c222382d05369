package rtps

// DDS Security in the transport: the glue between the sans-IO plugins of
// package security/... and the participant. The transport calls in at a
// few points (see the secure* calls in transport.go and endpoints.go); all
// of it runs with t.mu held.
//
//   - SPDP carries the identity and permissions tokens and the participant
//     security info; SEDP runs on the secure builtin endpoints
//     (discovery.Config.Secure) and is matched with a participant only
//     once it is authenticated.
//   - Per remote secure participant: the PKI-DH handshake over
//     DCPSParticipantStatelessMessage (timers on the transport's clock,
//     ticked by the timer loop), then the crypto tokens over
//     DCPSParticipantVolatileMessageSecure (one reliable writer and reader
//     per remote participant, submessages encrypted with the key-exchange
//     key).
//   - Outgoing messages: submessages of protected endpoints become
//     SEC_PREFIX/SEC_BODY/SEC_POSTFIX under the endpoint's key, then the
//     whole message SRTPS_PREFIX/SRTPS_POSTFIX under the participant's key
//     when governance protects RTPS. Payloads of protected writers are
//     encoded before the writer sees them.
//   - Incoming messages: the reverse, with every opener found by the key id
//     of the sender's key material; what should have been protected and
//     was not, what comes from an unauthenticated participant (besides
//     SPDP and the handshake) and what does not verify is dropped and
//     counted (SecurityStats).

import (
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/nros-go/nros/rmw/rtps/discovery"
	"github.com/nros-go/nros/rmw/rtps/endpoint"
	"github.com/nros-go/nros/rmw/rtps/security/access"
	"github.com/nros-go/nros/rmw/rtps/security/auth"
	"github.com/nros-go/nros/rmw/rtps/security/crypto"
	"github.com/nros-go/nros/rmw/rtps/security/keystore"
	"github.com/nros-go/nros/rmw/rtps/security/token"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// SecurityStats count what the security layer of a secure Transport did
// and refused.
type SecurityStats struct {
	// Authenticated counts completed handshakes; HandshakeFailures failed
	// ones (LastHandshakeError says why, without secrets).
	Authenticated      uint64
	HandshakeFailures  uint64
	LastHandshakeError string
	// Unauthenticated counts participants without security (no identity
	// token) that were ignored, each once; UnauthenticatedDropped the
	// submessages of unauthenticated participants dropped.
	Unauthenticated        uint64
	UnauthenticatedDropped uint64
	// Unprotected counts submessages dropped because they came in clear
	// where governance requires protection (e.g. a spoofed DATA).
	Unprotected uint64
	// Refused counts secure submessages, messages and payloads that did not
	// decode or verify; the next four split them by reason.
	Refused    uint64
	UnknownKey uint64
	BadMAC     uint64 // the MAC (common or receiver-specific) did not verify
	Replayed   uint64
	Malformed  uint64
	// RemoteDenied counts remote endpoints refused by their permissions
	// or by incompatible security info.
	RemoteDenied uint64
	// KeyRevisions counts the local endpoints that moved to new key
	// material (Config.SecurityKeyRevision, Transport.ReviseKeys).
	KeyRevisions uint64
	// Expired counts authenticated participants dropped because their
	// identity certificate or permissions grant ended while connected
	// (their endpoints are unmatched; a new handshake would refuse them).
	Expired uint64
}

// Builtin endpoint entity ids and bits of DDS Security 1.1 used here.
var (
	entStatelessW = wire.EntityID{0x00, 0x02, 0x01, 0xc3}
	entStatelessR = wire.EntityID{0x00, 0x02, 0x01, 0xc4}
	entVolatileW  = wire.EntityID{0xff, 0x02, 0x02, 0xc3}
	entVolatileR  = wire.EntityID{0xff, 0x02, 0x02, 0xc4}
)

const (
	bitStatelessW         wire.BuiltinEndpointSet = 1 << 22
	bitStatelessR         wire.BuiltinEndpointSet = 1 << 23
	bitVolatileW          wire.BuiltinEndpointSet = 1 << 24
	bitVolatileR          wire.BuiltinEndpointSet = 1 << 25
	bitSPDPSecureW        wire.BuiltinEndpointSet = 1 << 26
	bitSPDPSecureR        wire.BuiltinEndpointSet = 1 << 27
	pidIdentityToken                              = 0x1001
	pidPermissionsToken                           = 0x1002
	pidEndpointSecInfo                            = 0x1004
	pidParticipantSecInfo                         = 0x1005
)

// Generic message classes of the volatile channel.
const (
	gmParticipantTokens = "dds.sec.participant_crypto_tokens"
	gmWriterTokens      = "dds.sec.datawriter_crypto_tokens"
	gmReaderTokens      = "dds.sec.datareader_crypto_tokens"
)

// handshakeTick is how often pending handshakes are looked at;
// handshakeResend how long a handshake message waits for its answer
// before it is sent again (the stateless channel is best effort).
const (
	handshakeTick   = int64(50 * time.Millisecond)
	handshakeResend = 200 * time.Millisecond
	// expiryCheck bounds the wait for a credential's end: the wall clock
	// may be set while we wait on the monotonic one.
	expiryCheck = int64(time.Second)
	// revisionWait bounds how long a local endpoint keeps sending under
	// its old key while its remote endpoints take (acknowledge) the new
	// one; keyGrace is how long a receiver still takes a remote sender's
	// previous key after new material for it arrived.
	revisionWait = int64(2 * time.Second)
	keyGrace     = int64(10 * time.Second)
)

// secLocal is the protection of one local endpoint.
type secLocal struct {
	info    access.EndpointSecurityInfo
	km      crypto.KeyMaterial
	sender  *crypto.Sender // nil: neither submessage nor payload protected
	submsg  bool
	payload bool
	// origin: submessages carry a receiver-specific MAC per remote
	// endpoint that was given its own key (receivers, rlist the same).
	origin    bool
	receivers map[wire.GUID]*crypto.ReceiverKey
	rlist     []*crypto.ReceiverKey
	// uses counts the messages protected under km; rev is a key revision
	// under way (new material sent, not yet used); wantRev asks the next
	// tick to start one.
	uses    uint64
	rev     *secRevision
	wantRev bool
	// payloadKM protects payloads: km's first material, kept through key
	// revisions (a payload is encoded once and may be sent again from
	// the history long after, also to late joiners).
	payloadKM     crypto.KeyMaterial
	payloadSender *crypto.Sender
}

// tokenKMs is the material a remote endpoint gets with submessage key km:
// km, then the payload key when that differs (after a key revision).
func (l *secLocal) tokenKMs(km crypto.KeyMaterial) []crypto.KeyMaterial {
	if l.payload && l.payloadKM.SenderKeyID != km.SenderKeyID {
		return []crypto.KeyMaterial{km, l.payloadKM}
	}
	return []crypto.KeyMaterial{km}
}

// secRevision is new key material of a local endpoint on its way to the
// remote endpoints: it is used once they all acknowledged it (or after
// revisionWait).
type secRevision struct {
	km        crypto.KeyMaterial
	sender    *crypto.Sender
	receivers map[wire.GUID]*crypto.ReceiverKey
	wait      map[*secRemote]wire.SequenceNumber // the last volatile sample to each remote
	deadline  int64
}

// setReceiver gives remote endpoint g's receiver key k (nil: none).
func (l *secLocal) setReceiver(g wire.GUID, k *crypto.ReceiverKey) {
	if k == nil {
		if _, ok := l.receivers[g]; !ok {
			return
		}
		delete(l.receivers, g)
	} else {
		if l.receivers == nil {
			l.receivers = map[wire.GUID]*crypto.ReceiverKey{}
		}
		l.receivers[g] = k
	}
	l.rlist = l.rlist[:0:0]
	for _, k := range l.receivers {
		l.rlist = append(l.rlist, k)
	}
}

// secRemote is a remote secure participant.
type secRemote struct {
	prefix        wire.GuidPrefix
	hs            *auth.Handshake
	related       auth.MessageIdentity // of the last message answered
	authenticated bool
	failed        bool
	perm          *access.Remote
	kxSender      *crypto.Sender
	openers       map[crypto.KeyID]*crypto.Opener
	partRx        *crypto.ReceiverKey // its receiver key of our RTPS protection (origin authentication)
	// current is the key id each of its senders (endpoint GUID; its
	// participant: the zero entity) protects with; retiring the earlier
	// ones, still taken until the wall of their deadline.
	current         map[wire.GUID]crypto.KeyID
	retiring        map[crypto.KeyID]int64
	volW            *endpoint.Writer
	volR            *endpoint.Reader
	sent            map[[2]wire.GUID]wire.SequenceNumber // volatile SN of the tokens sent (local, remote endpoint)
	lastOut         *token.DataHolder                    // the last handshake token sent
	resentOnRequest bool
	authAt          int64
	// expiry is the wall time (ns) its certificate or grant ends at, the
	// earlier of the two (0: not authenticated); expiryWhy says which.
	expiry    int64
	expiryWhy string
}

// secState is the security of a Transport.
type secState struct {
	t      *Transport
	id     *auth.Identity
	ac     *access.Local
	pdata  []byte
	part   *crypto.Sender // RTPS protection; nil when governance says NONE
	partKM crypto.KeyMaterial
	// partOrigin: RTPS protection with origin authentication; partRx the
	// receiver keys of the authenticated remote participants.
	partOrigin bool
	partRx     []*crypto.ReceiverKey
	local      map[wire.EntityID]*secLocal
	remotes    map[wire.GuidPrefix]*secRemote
	ignored    map[wire.GuidPrefix]bool // unauthenticated participants seen
	sn         int64                    // stateless message sequence numbers
	st         SecurityStats
	ctr        crypto.Counters
	next       int64
	scratch    []byte
	// statelessR reassembles DCPSParticipantStatelessMessage samples.
	statelessR *endpoint.Reader
	now        int64 // of the submessage being handled
	pending    bool  // writerReady held a pair back
}

// newSecState checks the artifacts and derives the participant's identity
// (its GUID prefix comes from the certificate's subject).
func newSecState(t *Transport, a *keystore.Artifacts, now time.Time) (*secState, error) {
	id, err := auth.NewIdentity(a.Cert, a.IdentityCA, a.Key, auth.GUIDPrefix(t.prefix), now)
	if err != nil {
		return nil, fmt.Errorf("rtps: security: %s: %w", keystore.FileCert, err)
	}
	if len(a.CRL) > 0 {
		if err := id.SetCRL(a.CRL); err != nil {
			return nil, fmt.Errorf("rtps: security: %s: %w", keystore.FileCRL, err)
		}
	}
	ac, err := access.NewLocal(access.Config{Domain: t.cfg.DomainID, Governance: a.Governance,
		Permissions: a.Permissions, PermissionsCA: a.PermissionsCA, Identity: a.Cert, Now: now})
	if err != nil {
		return nil, fmt.Errorf("rtps: security: %w", err)
	}
	s := &secState{t: t, id: id, ac: ac, local: map[wire.EntityID]*secLocal{},
		remotes: map[wire.GuidPrefix]*secRemote{}, ignored: map[wire.GuidPrefix]bool{}}
	if k := protection(ac.Rule.RTPSProtection); k != crypto.ProtectNone {
		s.partKM, err = crypto.NewKeyMaterial(k.TransformKind(), randomKeyID(), nil)
		if err == nil {
			s.part, err = crypto.NewSender(s.partKM, crypto.SenderOptions{})
		}
		if err != nil {
			return nil, err
		}
		s.partOrigin = k.OriginAuthentication()
	}
	t.prefix = wire.GuidPrefix(id.GUIDPrefix)
	s.statelessR, err = endpoint.NewReader(endpoint.ReaderConfig{GUID: wire.GUID{Prefix: t.prefix, Entity: entStatelessR},
		Participant: endpoint.Participant{Vendor: Vendor, Version: wire.ProtocolVersion21}, MatchAny: true, MaxSampleSize: auth.MaxGenericMessageSize},
		endpoint.OutputFunc(func(to []wire.Locator, b []byte) { t.sendRaw(to, b) }),
		func(smp endpoint.Sample) {
			if smp.Payload != nil && !smp.Key {
				s.onStateless(s.now, smp.Writer.Prefix, smp.Payload)
			}
		})
	if err != nil {
		return nil, err
	}
	// The secure SEDP endpoints.
	if ac.Rule.DiscoveryProtection != access.ProtectionNone {
		info := ac.Rule.BuiltinEndpointSecurityInfo(access.BuiltinDiscoverySecure)
		for _, e := range []wire.EntityID{discovery.EntityIDSEDPPublicationsSecureWriter, discovery.EntityIDSEDPPublicationsSecureReader,
			discovery.EntityIDSEDPSubscriptionsSecureWriter, discovery.EntityIDSEDPSubscriptionsSecureReader} {
			if err := s.addLocal(e, info); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

func randomKeyID() crypto.KeyID {
	var k crypto.KeyID
	for k.IsZero() {
		b, _ := crypto.NewKeyMaterial(crypto.KindAES128GMAC, crypto.KeyID{1}, nil)
		copy(k[:], b.MasterSalt)
	}
	return k
}

// protection maps governance's protection kind to the crypto plugin's.
func protection(k access.ProtectionKind) crypto.ProtectionKind {
	switch k {
	case access.ProtectionSign:
		return crypto.ProtectSign
	case access.ProtectionEncrypt:
		return crypto.ProtectEncrypt
	case access.ProtectionSignWithOriginAuthentication:
		return crypto.ProtectSignWithOriginAuthentication
	case access.ProtectionEncryptWithOriginAuthentication:
		return crypto.ProtectEncryptWithOriginAuthentication
	}
	return crypto.ProtectNone
}

// addLocal gives a local endpoint its key material per its security info.
func (s *secState) addLocal(e wire.EntityID, info access.EndpointSecurityInfo) error {
	l := &secLocal{info: info,
		submsg:  info.Has(access.EndpointIsSubmessageProtected),
		payload: info.Has(access.EndpointIsPayloadProtected)}
	l.origin = l.submsg && info.PluginHas(access.PluginEndpointIsSubmessageOriginAuthenticated)
	if l.submsg || l.payload {
		kind := crypto.KindAES256GMAC
		if (l.submsg && info.PluginHas(access.PluginEndpointIsSubmessageEncrypted)) ||
			(l.payload && info.PluginHas(access.PluginEndpointIsPayloadEncrypted)) {
			kind = crypto.KindAES256GCM
		}
		km, err := crypto.NewKeyMaterial(kind, randomKeyID(), nil)
		if err != nil {
			return err
		}
		l.km = km
		if l.sender, err = crypto.NewSender(km, crypto.SenderOptions{}); err != nil {
			return err
		}
		l.payloadKM, l.payloadSender = km, l.sender
	}
	s.local[e] = l
	return nil
}

// discoveryConfig is the secure part of discovery's configuration.
func (s *secState) discoveryConfig() *discovery.Secure {
	le := true
	ps := []wire.Parameter{
		{ID: pidIdentityToken, Value: tokenValue(s.id.IdentityToken(), le)},
		{ID: pidPermissionsToken, Value: tokenValue(s.ac.PermissionsToken(), le)},
		{ID: pidParticipantSecInfo, Value: s.ac.ParticipantSecurityInfo().Marshal(le)},
	}
	return &discovery.Secure{
		Builtin:    bitStatelessW | bitStatelessR | bitVolatileW | bitVolatileR | bitSPDPSecureW | bitSPDPSecureR,
		Parameters: ps,
		Authorized: func(p wire.GuidPrefix) bool {
			r := s.remotes[p]
			return r != nil && r.authenticated
		},
	}
}

// tokenValue is a token as sent in SPDP: its class id only (see
// AUTH-ACCESS.md: properties stay local).
func tokenValue(h token.DataHolder, le bool) []byte {
	h.Properties = propagated(h.Properties)
	h.BinaryProperties = nil
	return h.Marshal(le)
}

func propagated(ps []token.Property) []token.Property {
	var out []token.Property
	for _, p := range ps {
		if p.Propagate {
			out = append(out, p)
		}
	}
	return out
}

// makePData builds c.pdata: the local SPDP essentials as a big-endian
// parameter list with sentinel, no encapsulation header.
func (s *secState) makePData(pd *wire.ParticipantData) []byte {
	be := binary.BigEndian
	var b []byte
	param := func(pid uint16, v []byte) {
		b = be.AppendUint16(b, pid)
		n := (len(v) + 3) &^ 3
		b = be.AppendUint16(b, uint16(n))
		b = append(b, v...)
		b = append(b, make([]byte, n-len(v))...)
	}
	param(0x0015, []byte{pd.ProtocolVersion.Major, pd.ProtocolVersion.Minor})
	param(0x0016, pd.VendorID[:])
	g := pd.GUID().Bytes()
	param(0x0050, g[:])
	param(0x0058, be.AppendUint32(nil, uint32(pd.BuiltinEndpoints)))
	loc := func(pid uint16, l wire.Locator) {
		v := be.AppendUint32(nil, uint32(l.Kind))
		v = be.AppendUint32(v, l.Port)
		v = append(v, l.Address[:]...)
		param(pid, v)
	}
	for _, l := range pd.MetatrafficUnicastLocators {
		loc(0x0032, l)
	}
	for _, l := range pd.DefaultUnicastLocators {
		loc(0x0031, l)
	}
	param(0x0002, be.AppendUint32(be.AppendUint32(nil, uint32(pd.LeaseDuration.Seconds)), pd.LeaseDuration.Fraction))
	b = be.AppendUint16(b, 1)
	b = be.AppendUint16(b, 0)
	return b
}

func (s *secState) wallNow() time.Time { return time.Unix(0, s.t.cfg.WallNow()) }

// onSPDP looks at a participant's SPDP (t.mu held): a secure one gets a
// handshake, one without identity token is ignored (and counted once).
func (s *secState) onSPDP(now int64, prefix wire.GuidPrefix) {
	if r := s.remotes[prefix]; r != nil || s.ignored[prefix] {
		return
	}
	p := s.t.disc.Participant(prefix)
	if p == nil {
		return
	}
	le := !p.Data.SecurityBigEndian
	idv, ok := wire.FindSecurity(p.Data.Security, pidIdentityToken)
	if !ok {
		if !s.ac.AllowUnauthenticatedParticipants() {
			s.ignored[prefix] = true
			s.st.Unauthenticated++
			s.t.cfg.Logf("rtps: security: participant %v has no identity token: ignored", prefix)
		}
		return
	}
	fail := func(err error) {
		s.ignored[prefix] = true
		s.st.HandshakeFailures++
		s.st.LastHandshakeError = err.Error()
		s.t.cfg.Warnf("rtps: security: participant %v refused: %v", prefix, err)
	}
	idt, err := token.Unmarshal(idv, le)
	if err == nil {
		err = auth.CheckIdentityToken(&idt)
	}
	if err != nil {
		fail(fmt.Errorf("identity token: %w", err))
		return
	}
	if v, ok := wire.FindSecurity(p.Data.Security, pidPermissionsToken); ok {
		pt, err := token.Unmarshal(v, le)
		if err == nil {
			err = access.CheckPermissionsToken(&pt)
		}
		if err != nil {
			fail(fmt.Errorf("permissions token: %w", err))
			return
		}
	}
	if v, ok := wire.FindSecurity(p.Data.Security, pidParticipantSecInfo); ok {
		info, err := access.UnmarshalParticipantSecurityInfo(v, le)
		if err != nil || !s.ac.ParticipantSecurityInfo().Compatible(info) {
			fail(fmt.Errorf("participant security info %+v does not match ours", info))
			return
		}
	}
	if s.pdata == nil {
		pd := s.t.disc.ParticipantData()
		pd.BuiltinEndpoints |= s.discoveryConfig().Builtin | discovery.BuiltinPublicationsSecureAnnouncer |
			discovery.BuiltinPublicationsSecureDetector | discovery.BuiltinSubscriptionsSecureAnnouncer | discovery.BuiltinSubscriptionsSecureDetector
		s.pdata = s.makePData(&pd)
	}
	// Resend soon: the first message often reaches a peer that has not
	// yet taken our SPDP (Cyclone then drops it).
	h, err := auth.New(auth.Config{Local: s.id, Permissions: s.ac.PermissionsDocument(), PData: s.pdata, ResendPeriod: handshakeResend},
		auth.GUIDPrefix(prefix), &idt, s.wallNow())
	if err != nil {
		fail(err)
		return
	}
	r := &secRemote{prefix: prefix, hs: h, openers: map[crypto.KeyID]*crypto.Opener{}, sent: map[[2]wire.GUID]wire.SequenceNumber{}}
	s.remotes[prefix] = r
	s.t.cfg.Logf("rtps: security: handshake with %v as %v", prefix, h.Role())
	if h.Role() == auth.Initiator {
		tok, err := h.Begin(s.wallNow())
		if err != nil {
			s.failed(r, err)
			return
		}
		s.sendStateless(r, auth.GMClassAuth, *tok, auth.MessageIdentity{})
	}
	s.next = min(s.next, now+handshakeTick)
	s.t.touchLocked(s.next)
}

func (s *secState) failed(r *secRemote, err error) {
	if r.failed {
		return
	}
	r.failed = true
	s.st.HandshakeFailures++
	s.st.LastHandshakeError = err.Error()
	s.t.cfg.Warnf("rtps: security: authentication of participant %v failed: %v", r.prefix, err)
}

// sendStateless sends one handshake token to r.
func (s *secState) sendStateless(r *secRemote, class string, tok token.DataHolder, related auth.MessageIdentity) {
	p := s.t.disc.Participant(r.prefix)
	if p == nil {
		return
	}
	s.sn++
	if class == auth.GMClassAuth {
		r.lastOut = &tok
	}
	m := auth.NewStatelessMessage(auth.GUIDPrefix(s.t.prefix), auth.GUIDPrefix(r.prefix), s.sn, related, class, tok)
	var b wire.Builder
	b.Reset(s.scratch[:0], wire.Header{Version: wire.ProtocolVersion21, Vendor: Vendor, Prefix: s.t.prefix})
	b.InfoDst(r.prefix)
	if err := b.Data(&wire.Data{ReaderID: entStatelessR, WriterID: entStatelessW,
		WriterSN: wire.SequenceNumber(s.sn), SerializedPayload: m.Marshal()}); err != nil {
		return
	}
	s.scratch = b.Bytes()
	s.t.cfg.Logf("rtps: security: %s to %v at %v", tok.ClassID, r.prefix, p.MetaLocators())
	s.t.sendRaw(p.MetaLocators(), s.scratch)
}

// handleSubmessage takes the submessages of the stateless and volatile
// builtin endpoints (t.mu held); it reports whether it did.
func (s *secState) handleSubmessage(now int64, rs *wire.ReceiverState, sm *wire.Submessage) bool {
	w, _, toReader := sm.WriterToReader()
	switch {
	case toReader:
	case sm.ID == wire.SubmsgAckNack:
		if sm.AckNack.WriterID == entVolatileW {
			if r := s.remotes[rs.SourcePrefix]; r != nil && r.volW != nil {
				r.volW.HandleSubmessage(now, rs, sm)
				s.t.touchLocked(r.volW.NextDeadline())
				s.checkPending(now)
				s.finishRevisions(now)
			}
			return true
		}
		return false
	case sm.ID == wire.SubmsgNackFrag:
		if sm.NackFrag.WriterID == entVolatileW {
			if r := s.remotes[rs.SourcePrefix]; r != nil && r.volW != nil {
				r.volW.HandleSubmessage(now, rs, sm)
			}
			return true
		}
		return false
	default:
		return false
	}
	switch w {
	case entStatelessW:
		// Through a best-effort reader: Cyclone DDS fragments its
		// handshake messages (certificate and permissions) in 1344-byte
		// pieces.
		s.now = now
		s.statelessR.HandleSubmessage(now, rs, sm)
		return true
	case entVolatileW:
		if r := s.remotes[rs.SourcePrefix]; r != nil && r.volR != nil {
			r.volR.HandleSubmessage(now, rs, sm)
			s.t.touchLocked(r.volR.NextDeadline())
		}
		return true
	}
	return false
}

// onStateless handles a DCPSParticipantStatelessMessage sample.
func (s *secState) onStateless(now int64, from wire.GuidPrefix, payload []byte) {
	r := s.remotes[from]
	if r == nil || r.failed {
		s.t.cfg.Logf("rtps: security: stateless message from unknown or failed %v", from)
		return
	}
	m, err := auth.UnmarshalGenericMessage(payload)
	if err != nil {
		s.t.cfg.Logf("rtps: security: stateless message from %v: %v", from, err)
		return
	}
	tok, err := m.Token(auth.GUIDPrefix(s.t.prefix))
	if err != nil {
		s.t.cfg.Logf("rtps: security: stateless message from %v: %v", from, err)
		return
	}
	s.t.cfg.Logf("rtps: security: %s %s from %v", m.ClassID, tok.ClassID, from)
	s.t.disc.Confirm(now, from)
	switch m.ClassID {
	case auth.GMClassAuthRequest:
		_ = r.hs.HandleAuthRequest(tok)
		// The peer has just taken our SPDP: a request we sent before
		// probably found it not knowing us (Cyclone drops it), so send
		// it again now rather than at the next resend.
		if r.lastOut != nil && !r.hs.Done() && !r.resentOnRequest {
			r.resentOnRequest = true
			s.sendStateless(r, auth.GMClassAuth, *r.lastOut, r.related)
		}
		return
	case auth.GMClassAuth:
	default:
		return
	}
	out, err := r.hs.HandleMessage(tok, s.wallNow())
	if err != nil {
		s.failed(r, err)
		return
	}
	if out != nil {
		r.related = m.MessageIdentity
		s.sendStateless(r, auth.GMClassAuth, *out, r.related)
	}
	if r.hs.Done() && !r.authenticated {
		s.authenticated(now, r)
	}
}

// authenticated finishes a handshake: access control on the remote's
// permissions, the key-exchange key, the volatile channel, our tokens.
func (s *secState) authenticated(now int64, r *secRemote) {
	res := r.hs.Result()
	perm, err := s.ac.ValidateRemote(res.RemotePermissions, res.RemoteCert, s.wallNow())
	if err != nil {
		s.failed(r, fmt.Errorf("permissions of %q: %w", res.RemoteCert.Subject, err))
		return
	}
	r.perm = perm
	r.expiry, r.expiryWhy = credentialsEnd(res.RemoteCert, perm.Grant)
	kx := crypto.KxKeyMaterial(res.SharedSecret.Challenge1[:], res.SharedSecret.Challenge2[:], res.SharedSecret.Secret)
	if r.kxSender, err = crypto.NewSender(kx, crypto.SenderOptions{}); err != nil {
		s.failed(r, err)
		return
	}
	o, err := crypto.NewOpener(kx, &s.ctr)
	if err != nil {
		s.failed(r, err)
		return
	}
	r.openers[crypto.KeyID{}] = o
	p := s.t.disc.Participant(r.prefix)
	if p == nil {
		return
	}
	locs := p.MetaLocators()
	part := endpoint.Participant{Vendor: Vendor, Version: wire.ProtocolVersion21}
	out := endpoint.OutputFunc(func(to []wire.Locator, msg []byte) { s.sendVolatile(r, to, msg) })
	r.volW, err = endpoint.NewWriter(endpoint.WriterConfig{GUID: wire.GUID{Prefix: s.t.prefix, Entity: entVolatileW},
		Participant: part, Reliable: true, KeepAll: true, Depth: 64, FragmentSize: 8192, MaxMessageSize: 16384,
		// Writers wait for the acknowledgement of their keys
		// (writerReady): ask for it soon. HEARTBEATs go only to a
		// reader that is behind.
		HeartbeatPeriod: int64(10 * time.Millisecond)}, out)
	if err != nil {
		s.failed(r, err)
		return
	}
	r.volR, err = endpoint.NewReader(endpoint.ReaderConfig{GUID: wire.GUID{Prefix: s.t.prefix, Entity: entVolatileR},
		Participant: part, MaxSampleSize: 1 << 20}, out, func(smp endpoint.Sample) { s.onVolatile(r, smp) })
	if err != nil {
		s.failed(r, err)
		return
	}
	r.volW.MatchReader(now, wire.GUID{Prefix: r.prefix, Entity: entVolatileR}, locs, true, false)
	r.volR.MatchWriter(now, wire.GUID{Prefix: r.prefix, Entity: entVolatileW}, locs, true)
	r.authenticated = true
	r.authAt = now
	s.st.Authenticated++
	s.t.cfg.Logf("rtps: security: participant %v authenticated (%q)", r.prefix, res.RemoteCert.Subject)
	if s.part != nil {
		km := s.partKM
		if s.partOrigin {
			if km, r.partRx, err = receiverKey(s.partKM); err != nil {
				s.failed(r, err)
				return
			}
			s.syncPartReceivers()
		}
		s.sendTokens(now, r, gmParticipantTokens, wire.GUID{}, wire.GUID{}, km)
	}
	s.syncTokensLocked(now)
	s.t.disc.Authorize(now, r.prefix)
	s.t.touchLocked(r.volW.NextDeadline())
}

// credentialsEnd is when a remote participant's credentials end (wall ns):
// its certificate after NotAfter, its grant at its not_after, whichever is
// first, and why (subject and date only).
func credentialsEnd(cert *x509.Certificate, g *access.Grant) (int64, string) {
	end := cert.NotAfter.Add(time.Nanosecond)
	why := fmt.Sprintf("certificate %q expired at %s", cert.Subject.String(), cert.NotAfter.UTC().Format(time.RFC3339))
	if g != nil && !g.NotAfter.IsZero() && g.NotAfter.Before(end) {
		end = g.NotAfter
		why = fmt.Sprintf("permissions grant %q expired at %s", g.Name, g.NotAfter.UTC().Format(time.RFC3339))
	}
	return end.UnixNano(), why
}

// checkExpiry drops the authenticated participants whose credentials have
// ended by wall time wall and returns when to look again.
func (s *secState) checkExpiry(now, wall int64) int64 {
	next := endpoint.Never
	for _, r := range s.remotes {
		if !r.authenticated || r.expiry == 0 {
			continue
		}
		if wall < r.expiry {
			next = min(next, now+min(r.expiry-wall, expiryCheck))
			continue
		}
		s.st.Expired++
		s.t.cfg.Warnf("rtps: security: participant %v dropped: %s", r.prefix, r.expiryWhy)
		r.authenticated = false
		if s.t.disc.Participant(r.prefix) != nil {
			s.t.disc.Drop(now, r.prefix) // unmatches its endpoints, then forget
		}
		s.forget(r.prefix)
	}
	return next
}

// sendTokens writes crypto tokens on the volatile channel to r.
func (s *secState) sendTokens(now int64, r *secRemote, class string, local, remote wire.GUID, kms ...crypto.KeyMaterial) wire.SequenceNumber {
	ct := crypto.Tokens(kms...)
	hs := make([]token.DataHolder, len(ct))
	for i, c := range ct {
		h := token.DataHolder{ClassID: c.ClassID}
		for _, bp := range c.BinaryProperties {
			h.BinaryProperties = append(h.BinaryProperties, token.BinaryProperty{Name: bp.Name, Value: bp.Value, Propagate: true})
		}
		hs[i] = h
	}
	m := &auth.GenericMessage{
		MessageIdentity:        auth.MessageIdentity{Source: auth.MakeGUID(auth.GUIDPrefix(s.t.prefix), entityU32(entVolatileW)), Seq: int64(r.volW.LastSN()) + 1},
		DestinationParticipant: auth.MakeGUID(auth.GUIDPrefix(r.prefix), auth.EntityParticipant),
		DestinationEndpoint:    auth.GUID(remote.Bytes()),
		SourceEndpoint:         auth.GUID(local.Bytes()),
		ClassID:                class,
		Data:                   hs,
	}
	if remote.IsZero() {
		m.DestinationEndpoint = auth.GUID{}
	}
	if local.IsZero() {
		m.SourceEndpoint = auth.GUID{}
	}
	sn, err := r.volW.Write(now, m.Marshal(), s.t.cfg.WallNow())
	if err != nil {
		s.t.cfg.Logf("rtps: security: tokens to %v: %v", r.prefix, err)
	}
	s.t.touchLocked(r.volW.NextDeadline())
	return sn
}

func entityU32(e wire.EntityID) uint32 { return binary.BigEndian.Uint32(e[:]) }

// onVolatile takes the crypto tokens a remote participant sent us.
func (s *secState) onVolatile(r *secRemote, smp endpoint.Sample) {
	if smp.Payload == nil || smp.Key {
		return
	}
	m, err := auth.UnmarshalGenericMessage(smp.Payload)
	if err != nil || m.DestinationParticipant != auth.MakeGUID(auth.GUIDPrefix(s.t.prefix), auth.EntityParticipant) {
		return
	}
	switch m.ClassID {
	case gmParticipantTokens, gmWriterTokens, gmReaderTokens:
	default:
		return
	}
	ct := make([]crypto.Token, len(m.Data))
	for i, h := range m.Data {
		ct[i] = crypto.Token{ClassID: h.ClassID}
		for _, p := range h.Properties {
			ct[i].Properties = append(ct[i].Properties, crypto.Property{Name: p.Name, Value: p.Value})
		}
		for _, bp := range h.BinaryProperties {
			ct[i].BinaryProperties = append(ct[i].BinaryProperties, crypto.BinaryProperty{Name: bp.Name, Value: bp.Value})
		}
	}
	kms, err := crypto.ParseTokens(ct)
	if err != nil {
		s.t.cfg.Logf("rtps: security: tokens from %v: %v", r.prefix, err)
		return
	}
	for _, km := range kms {
		o, err := crypto.NewOpener(km, &s.ctr)
		if err == nil && !km.SenderKeyID.IsZero() {
			r.openers[km.SenderKeyID] = o
		}
	}
	// New material from a sender that had some (a key revision): its
	// previous key is still taken for keyGrace, for what was protected
	// under it and is still on its way.
	src := wire.GUID{Prefix: r.prefix}
	copy(src.Entity[:], m.SourceEndpoint[12:])
	id := kms[0].SenderKeyID
	if id.IsZero() {
		return
	}
	if r.current == nil {
		r.current = map[wire.GUID]crypto.KeyID{}
		r.retiring = map[crypto.KeyID]int64{}
	}
	if old, ok := r.current[src]; ok && old != id {
		r.retiring[old] = s.t.cfg.Clock.Now() + keyGrace
		s.t.touchLocked(r.retiring[old])
	}
	delete(r.retiring, id)
	r.current[src] = id
}

// retireKeys forgets the previous keys whose grace period ended and
// returns the next end.
func (s *secState) retireKeys(now int64) int64 {
	next := endpoint.Never
	for _, r := range s.remotes {
		for id, end := range r.retiring {
			if now >= end {
				delete(r.openers, id)
				delete(r.retiring, id)
			} else {
				next = min(next, end)
			}
		}
	}
	return next
}

// reviseKeys starts a key revision of every protected local endpoint that
// asked for one (or of all, with all): new key material, sent to each
// remote endpoint that has the current one. The endpoint moves to it in
// finishRevisions.
func (s *secState) reviseKeys(now int64, all bool) {
	for e, l := range s.local {
		if l.sender == nil || !l.submsg || l.rev != nil || !(all || l.wantRev) {
			continue
		}
		l.wantRev = false
		km, err := crypto.NewKeyMaterial(l.km.Kind, randomKeyID(), nil)
		if err != nil {
			continue
		}
		snd, err := crypto.NewSender(km, crypto.SenderOptions{})
		if err != nil {
			continue
		}
		l.rev = &secRevision{km: km, sender: snd, wait: map[*secRemote]wire.SequenceNumber{}, deadline: now + revisionWait}
		lg := wire.GUID{Prefix: s.t.prefix, Entity: e}
		for _, r := range s.remotes {
			if !r.authenticated {
				continue
			}
			for k := range r.sent {
				if k[0] == lg {
					s.sendRevision(now, r, l, k[0], k[1])
				}
			}
		}
		s.t.touchLocked(l.rev.deadline)
	}
}

// sendRevision sends the material of l's revision to remote endpoint
// remote of r.
func (s *secState) sendRevision(now int64, r *secRemote, l *secLocal, local, remote wire.GUID) {
	km := l.rev.km
	if l.origin {
		var rk *crypto.ReceiverKey
		var err error
		if km, rk, err = receiverKey(l.rev.km); err != nil {
			return
		}
		if l.rev.receivers == nil {
			l.rev.receivers = map[wire.GUID]*crypto.ReceiverKey{}
		}
		l.rev.receivers[remote] = rk
	}
	class := gmReaderTokens
	if local.Entity.IsWriter() {
		class = gmWriterTokens
	}
	if sn := s.sendTokens(now, r, class, local, remote, l.tokenKMs(km)...); sn != 0 {
		l.rev.wait[r] = sn
	}
}

// finishRevisions moves the local endpoints whose new key material every
// remote participant acknowledged (or whose revisionWait ended) to it, and
// returns when to look again.
func (s *secState) finishRevisions(now int64) int64 {
	next := endpoint.Never
	for _, l := range s.local {
		rev := l.rev
		if rev == nil {
			continue
		}
		done := now >= rev.deadline
		if !done {
			done = true
			for r, sn := range rev.wait {
				if s.remotes[r.prefix] == r && r.volW != nil && !r.volW.Acknowledged(sn) {
					done = false
					break
				}
			}
		}
		if !done {
			next = min(next, rev.deadline)
			continue
		}
		l.km, l.sender, l.rev, l.uses = rev.km, rev.sender, nil, 0
		if l.origin {
			l.receivers = nil
			l.rlist = nil
			for g, k := range rev.receivers {
				l.setReceiver(g, k)
			}
		}
		s.st.KeyRevisions++
	}
	return next
}

// syncTokensLocked sends the tokens of every protected local endpoint to
// every matching remote endpoint of an authenticated participant that has
// not had them.
func (s *secState) syncTokensLocked(now int64) {
	t := s.t
	for _, r := range s.remotes {
		if !r.authenticated {
			continue
		}
		if p := t.disc.Participant(r.prefix); p != nil {
			for _, pair := range [][2]wire.EntityID{
				{discovery.EntityIDSEDPPublicationsSecureWriter, discovery.EntityIDSEDPPublicationsSecureReader},
				{discovery.EntityIDSEDPSubscriptionsSecureWriter, discovery.EntityIDSEDPSubscriptionsSecureReader},
			} {
				s.tokensFor(now, r, pair[0], wire.GUID{Prefix: r.prefix, Entity: pair[1]}, true)
				s.tokensFor(now, r, pair[1], wire.GUID{Prefix: r.prefix, Entity: pair[0]}, false)
			}
		}
	}
	for g, e := range t.remR {
		r := s.remotes[g.Prefix]
		if r == nil || !r.authenticated {
			continue
		}
		for id, p := range t.pubs {
			if p.ed.TopicName == e.Data.TopicName {
				s.tokensFor(now, r, id, g, true)
			}
		}
	}
	for g, e := range t.remW {
		r := s.remotes[g.Prefix]
		if r == nil || !r.authenticated {
			continue
		}
		for id, sub := range t.subs {
			if sub.ed.TopicName == e.Data.TopicName {
				s.tokensFor(now, r, id, g, false)
			}
		}
	}
}

// secSyncTokensLocked is syncTokensLocked when secure. The transport calls
// it before it pairs endpoints: under origin authentication a protected
// submessage carries a MAC only for the remote endpoints that were given
// their receiver-specific key, so the key goes out first (an ACKNACK sent
// before it would be refused by its receiver once the key arrived).
func (t *Transport) secSyncTokensLocked(now int64) {
	if t.sec != nil {
		t.sec.syncTokensLocked(now)
	}
}

func (s *secState) tokensFor(now int64, r *secRemote, local wire.EntityID, remote wire.GUID, writer bool) {
	l := s.local[local]
	if l == nil || l.sender == nil {
		return
	}
	lg := wire.GUID{Prefix: s.t.prefix, Entity: local}
	k := [2]wire.GUID{lg, remote}
	if _, ok := r.sent[k]; ok {
		return
	}
	class := gmReaderTokens
	if writer {
		class = gmWriterTokens
	}
	km := l.km
	if l.origin {
		var rk *crypto.ReceiverKey
		var err error
		if km, rk, err = receiverKey(l.km); err != nil {
			s.t.cfg.Logf("rtps: security: tokens of %v: %v", lg, err)
			return
		}
		l.setReceiver(remote, rk)
	}
	r.sent[k] = s.sendTokens(now, r, class, lg, remote, l.tokenKMs(km)...)
	if l.rev != nil {
		s.sendRevision(now, r, l, lg, remote)
	}
}

// receiverKey gives km a fresh receiver-specific key: the material for one
// remote receiver of an origin-authenticated sender, and the key the sender
// MACs for it with.
func receiverKey(km crypto.KeyMaterial) (crypto.KeyMaterial, *crypto.ReceiverKey, error) {
	rkm, err := km.WithReceiverSpecificKey(randomKeyID(), nil)
	if err != nil {
		return km, nil, err
	}
	rk, err := crypto.NewReceiverKey(rkm)
	return rkm, rk, err
}

// syncPartReceivers rebuilds the receiver keys of our RTPS protection from
// the remote participants.
func (s *secState) syncPartReceivers() {
	s.partRx = s.partRx[:0:0]
	for _, r := range s.remotes {
		if r.partRx != nil {
			s.partRx = append(s.partRx, r.partRx)
		}
	}
}

// writerReady reports whether local writer w may be matched with remote
// reader g: when w is protected, once the remote participant acknowledged
// the volatile sample that carried w's keys. Until then Cyclone DDS has
// not matched w (it waits for the keys), and a volatile reader would skip
// what w wrote before (it starts at the writer's next sample). The pair
// is matched later by checkPending.
func (s *secState) writerReady(w wire.EntityID, g wire.GUID) bool {
	l := s.local[w]
	if l == nil || l.sender == nil || !l.submsg && !l.payload {
		return true
	}
	r := s.remotes[g.Prefix]
	if r == nil || r.volW == nil {
		return false
	}
	sn, ok := r.sent[[2]wire.GUID{{Prefix: s.t.prefix, Entity: w}, g}]
	if !ok || sn == 0 || !r.volW.Acknowledged(sn) {
		s.pending = true
		s.t.cfg.Logf("rtps: security: writer %v waits for %v to take its keys", w, g)
		return false
	}
	return true
}

// checkPending matches the writer/reader pairs writerReady held back whose
// keys have been acknowledged since.
func (s *secState) checkPending(now int64) {
	if !s.pending {
		return
	}
	s.pending = false
	t := s.t
	for g, e := range t.remR {
		for _, p := range t.pubs {
			if p.ed.TopicName == e.Data.TopicName && !p.remote[g] && !p.refused[g] {
				t.pairRemoteReader(now, p, e)
			}
		}
	}
}

// tick resends handshake messages, fails late ones and runs the volatile
// endpoints; it returns the next deadline.
func (s *secState) tick(now int64) int64 {
	next := s.checkExpiry(now, s.t.cfg.WallNow())
	s.reviseKeys(now, false)
	next = min(next, s.finishRevisions(now), s.retireKeys(now))
	pending := false
	for _, r := range s.remotes {
		if r.volW != nil {
			next = min(next, r.volW.Tick(now), r.volR.Tick(now))
		}
		if r.failed || r.authenticated {
			continue
		}
		pending = true
		if now < s.next {
			continue
		}
		tok, err := r.hs.Tick(s.wallNow())
		if err != nil {
			s.failed(r, err)
			continue
		}
		if tok != nil {
			s.sendStateless(r, auth.GMClassAuth, *tok, r.related)
		}
	}
	if now >= s.next {
		s.next = now + handshakeTick
	}
	if pending {
		next = min(next, s.next)
	}
	return next
}

// forgetLocal drops the keys of a closed local endpoint and the record of
// the tokens it sent.
func (s *secState) forgetLocal(g wire.GUID) {
	delete(s.local, g.Entity)
	for _, r := range s.remotes {
		for k := range r.sent {
			if k[0] == g {
				delete(r.sent, k)
			}
		}
	}
}

// secForgetRemoteLocked is forgetRemote when secure: the transport calls
// it when a remote endpoint is lost.
func (t *Transport) secForgetRemoteLocked(g wire.GUID) {
	if t.sec != nil {
		t.sec.forgetRemote(g)
	}
}

// forgetRemote drops what we keep for remote endpoint g: the receiver keys
// our endpoints MAC for it with (under origin authentication every
// protected message carries one MAC per key) and the record of the tokens
// it was sent.
func (s *secState) forgetRemote(g wire.GUID) {
	for _, l := range s.local {
		l.setReceiver(g, nil)
		if l.rev != nil {
			delete(l.rev.receivers, g)
		}
	}
	if r := s.remotes[g.Prefix]; r != nil {
		for k := range r.sent {
			if k[1] == g {
				delete(r.sent, k)
			}
		}
	}
}

// forget drops a participant that left (or whose lease ended), and the
// receiver keys we MACed for it with.
func (s *secState) forget(prefix wire.GuidPrefix) {
	r := s.remotes[prefix]
	delete(s.remotes, prefix)
	delete(s.ignored, prefix)
	if r != nil && r.partRx != nil {
		s.syncPartReceivers()
	}
	for _, l := range s.local {
		for g := range l.receivers {
			if g.Prefix == prefix {
				l.setReceiver(g, nil)
			}
		}
	}
}

// sendVolatile protects the submessages of a volatile endpoint with the
// key-exchange key of r and sends the message (not RTPS-protected: the
// peer gets our participant key through it).
func (s *secState) sendVolatile(r *secRemote, to []wire.Locator, msg []byte) {
	out, err := s.protectSubmessages(nil, msg, func(wire.EntityID) (*crypto.Sender, []*crypto.ReceiverKey) { return r.kxSender, nil })
	if err != nil {
		return
	}
	s.t.sendRaw(to, out)
}

// protect is the outgoing filter of every message of the transport's
// endpoints and discovery.
func (s *secState) protect(msg []byte) []byte {
	nonDisc := false
	out, err := s.protectSubmessages(s.scratchOut(), msg, func(e wire.EntityID) (*crypto.Sender, []*crypto.ReceiverKey) {
		if e != wire.EntityIDSPDPWriter && e != wire.EntityIDSPDPReader && e != entStatelessW && e != entStatelessR {
			nonDisc = true
		}
		if l := s.local[e]; l != nil && l.submsg {
			s.used(l)
			return l.sender, l.rlist
		}
		return nil, nil
	})
	if err != nil {
		s.t.cfg.Logf("rtps: security: %v", err)
		return nil
	}
	if nonDisc && s.part != nil {
		enc, err := s.part.EncodeMessage(nil, out, s.partRx)
		if err != nil {
			s.t.cfg.Logf("rtps: security: %v", err)
			return nil
		}
		return enc
	}
	return out
}

func (s *secState) scratchOut() []byte { return nil }

// submessage ids used by the filters.
const (
	smPad       = 0x01
	smAckNack   = 0x06
	smHeartbeat = 0x07
	smGap       = 0x08
	smInfoTS    = 0x09
	smInfoSrc   = 0x0c
	smInfoRepIP = 0x0d
	smInfoDst   = 0x0e
	smInfoReply = 0x0f
	smNackFrag  = 0x12
	smHBFrag    = 0x13
	smData      = 0x15
	smDataFrag  = 0x16
	smSecBody   = 0x30
	smSecPrefix = 0x31
	smSecPost   = 0x32
)

var errShort = errors.New("rtps: security: truncated submessage")

// subEntities returns the writer and reader entity ids of a submessage
// body, and whether the sending side is the reader (ACKNACK, NACK_FRAG).
func subEntities(id byte, body []byte) (w, r wire.EntityID, fromReader, ok bool) {
	switch id {
	case smData, smDataFrag:
		if len(body) < 12 {
			return w, r, false, false
		}
		copy(r[:], body[4:8])
		copy(w[:], body[8:12])
		return w, r, false, true
	case smHeartbeat, smGap, smHBFrag, smAckNack, smNackFrag:
		if len(body) < 8 {
			return w, r, false, false
		}
		copy(r[:], body[0:4])
		copy(w[:], body[4:8])
		return w, r, id == smAckNack || id == smNackFrag, true
	}
	return w, r, false, false
}

// walk calls f with every submessage of msg (after the 20-byte header):
// its id, its bytes (header included, length made explicit) and body.
func walk(msg []byte, f func(id byte, sm, body []byte) error) error {
	for off := 20; off < len(msg); {
		if len(msg)-off < 4 {
			return errShort
		}
		id, flags := msg[off], msg[off+1]
		var n int
		if flags&1 != 0 {
			n = int(binary.LittleEndian.Uint16(msg[off+2:]))
		} else {
			n = int(binary.BigEndian.Uint16(msg[off+2:]))
		}
		if n == 0 && id != smPad && id != smInfoTS {
			n = len(msg) - off - 4
		}
		if off+4+n > len(msg) {
			return errShort
		}
		if err := f(id, msg[off:off+4+n], msg[off+4:off+4+n]); err != nil {
			return err
		}
		off += 4 + n
	}
	return nil
}

// protectSubmessages copies msg into dst, each entity submessage for which
// sender returns a Sender protected by it, with a receiver-specific MAC
// for each of the receiver keys it returns.
func (s *secState) protectSubmessages(dst, msg []byte, sender func(wire.EntityID) (*crypto.Sender, []*crypto.ReceiverKey)) ([]byte, error) {
	if len(msg) < 20 {
		return nil, errShort
	}
	dst = append(dst, msg[:20]...)
	err := walk(msg, func(id byte, sm, body []byte) error {
		w, r, fromReader, ok := subEntities(id, body)
		if !ok {
			dst = append(dst, sm...)
			return nil
		}
		local := w
		if fromReader {
			local = r
		}
		snd, rx := sender(local)
		if snd == nil {
			dst = append(dst, sm...)
			return nil
		}
		plain := sm
		if len(plain)%4 != 0 || explicitLen(plain) != len(plain)-4 {
			plain = fixLen(plain)
		}
		var err error
		dst, err = snd.EncodeSubmessage(dst, plain, rx)
		return err
	})
	return dst, err
}

func explicitLen(sm []byte) int {
	if sm[1]&1 != 0 {
		return int(binary.LittleEndian.Uint16(sm[2:]))
	}
	return int(binary.BigEndian.Uint16(sm[2:]))
}

// fixLen pads a submessage to a multiple of 4 and writes its length.
func fixLen(sm []byte) []byte {
	out := append([]byte(nil), sm...)
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	n := uint16(len(out) - 4)
	if out[1]&1 != 0 {
		binary.LittleEndian.PutUint16(out[2:], n)
	} else {
		binary.BigEndian.PutUint16(out[2:], n)
	}
	return out
}

// unprotect is the incoming filter: it returns the plain message to walk,
// or nil when the whole message is dropped.
func (s *secState) unprotect(msg []byte) []byte {
	if len(msg) < 20 {
		return msg
	}
	var prefix wire.GuidPrefix
	copy(prefix[:], msg[8:20])
	r := s.remotes[prefix]
	authd := r != nil && r.authenticated
	rtpsProtected := false
	if crypto.IsProtectedMessage(msg) {
		if !authd {
			s.st.UnauthenticatedDropped++
			return nil
		}
		sm, err := crypto.SplitMessage(msg)
		if err != nil {
			s.st.Refused++
			return nil
		}
		o := r.openers[sm.Header.KeyID]
		if o == nil {
			s.st.Refused++
			s.ctr.UnknownKey.Add(1)
			return nil
		}
		plain, err := o.DecodeMessage(nil, msg)
		if err != nil {
			s.st.Refused++
			return nil
		}
		msg = plain
		rtpsProtected = true
	}
	out := append([]byte(nil), msg[:20]...)
	for off := 20; off < len(msg); {
		if len(msg)-off < 4 {
			break
		}
		id := msg[off]
		if id == smSecPrefix {
			if !authd {
				s.st.UnauthenticatedDropped++
				return nil
			}
			ss, n, err := crypto.SplitSubmessage(msg[off:])
			if err != nil {
				s.st.Refused++
				return nil
			}
			o := r.openers[ss.Header.KeyID]
			if o == nil {
				s.st.Refused++
				s.ctr.UnknownKey.Add(1)
				off += n
				continue
			}
			m := len(out)
			out, _, err = o.DecodeSubmessage(out, msg[off:])
			if err != nil {
				s.st.Refused++
				out = out[:m]
			}
			off += n
			continue
		}
		var n int
		if msg[off+1]&1 != 0 {
			n = int(binary.LittleEndian.Uint16(msg[off+2:]))
		} else {
			n = int(binary.BigEndian.Uint16(msg[off+2:]))
		}
		if n == 0 && id != smPad && id != smInfoTS {
			n = len(msg) - off - 4
		}
		if off+4+n > len(msg) {
			break
		}
		sm := msg[off : off+4+n]
		off += 4 + n
		w, rd, fromReader, ok := subEntities(id, sm[4:])
		if !ok {
			out = append(out, sm...)
			continue
		}
		if w == wire.EntityIDSPDPWriter || w == entStatelessW {
			out = append(out, sm...)
			continue
		}
		if !authd {
			if !s.ac.AllowUnauthenticatedParticipants() {
				s.st.UnauthenticatedDropped++
				continue
			}
		} else if s.part != nil && !rtpsProtected && w != entVolatileW {
			s.st.Unprotected++
			continue
		}
		if s.mustProtect(w, rd, fromReader, prefix) {
			s.st.Unprotected++
			continue
		}
		out = append(out, sm...)
	}
	return out
}

// mustProtect reports whether a submessage between the remote entity and
// a local one may only come protected.
func (s *secState) mustProtect(w, r wire.EntityID, fromReader bool, prefix wire.GuidPrefix) bool {
	if w[0] == 0xff || r[0] == 0xff {
		return true // secure builtin endpoints
	}
	local := r
	if fromReader {
		local = w
	}
	if l := s.local[local]; l != nil {
		return l.submsg
	}
	if !fromReader && local == wire.EntityIDUnknown {
		for _, sub := range s.t.route[wire.GUID{Prefix: prefix, Entity: w}] {
			if l := s.local[sub.guid.Entity]; l != nil && l.submsg {
				return true
			}
		}
	}
	return false
}

// checkLocal runs access control on a new local endpoint and sets its
// security info (PID_ENDPOINT_SECURITY_INFO) and key material.
func (s *secState) checkLocal(ed *wire.EndpointData, writer bool) error {
	var info access.EndpointSecurityInfo
	var err error
	if writer {
		info, err = s.ac.CheckCreateWriter(ed.TopicName, ed.Partitions)
	} else {
		info, err = s.ac.CheckCreateReader(ed.TopicName, ed.Partitions)
	}
	if err != nil {
		return fmt.Errorf("rtps: security: %w", err)
	}
	if err := s.addLocal(ed.EndpointGUID.Entity, info); err != nil {
		return err
	}
	ed.Security = []wire.Parameter{{ID: pidEndpointSecInfo, Value: info.Marshal(true)}}
	return nil
}

// admitRemote decides whether a discovered remote endpoint may be matched:
// its participant's permissions must allow it, and its security info must
// match ours for the topic.
func (s *secState) admitRemote(e *discovery.Endpoint) bool {
	r := s.remotes[e.GUID().Prefix]
	if r == nil || !r.authenticated || r.perm == nil {
		s.st.RemoteDenied++
		return false
	}
	var err error
	if e.Writer {
		err = r.perm.CheckRemoteWriter(e.Data.TopicName, e.Data.Partitions)
	} else {
		err = r.perm.CheckRemoteReader(e.Data.TopicName, e.Data.Partitions)
	}
	if err != nil {
		s.st.RemoteDenied++
		s.t.cfg.Logf("rtps: security: remote endpoint %v refused: %v", e.GUID(), err)
		return false
	}
	if v, ok := wire.FindSecurity(e.Data.Security, pidEndpointSecInfo); ok {
		if info, err := access.UnmarshalEndpointSecurityInfo(v, !e.Data.SecurityBigEndian); err == nil {
			if mine, err := s.ac.EndpointSecurityInfo(e.Data.TopicName); err == nil && !mine.Compatible(info) {
				s.st.RemoteDenied++
				s.t.cfg.Logf("rtps: security: remote endpoint %v: security info does not match", e.GUID())
				return false
			}
		}
	}
	return true
}

// encodePayload protects a payload of local writer e, if its topic asks.
func (s *secState) encodePayload(e wire.EntityID, data []byte) ([]byte, error) {
	l := s.local[e]
	if l == nil || !l.payload {
		return data, nil
	}
	if pad := len(data) % 4; pad != 0 && len(data) >= 4 {
		data = append(append([]byte(nil), data...), make([]byte, 4-pad)...)
		data[3] = (data[3] &^ 3) | byte(4-pad)
	}
	return l.payloadSender.EncodePayload(nil, data)
}

// used counts one submessage protected by l and asks for a key revision when
// Config.SecurityKeyRevision says so.
func (s *secState) used(l *secLocal) {
	l.uses++
	if n := s.t.cfg.SecurityKeyRevision; n != 0 && l.uses >= n && l.rev == nil && !l.wantRev {
		l.wantRev = true
		s.t.touchLocked(s.t.cfg.Clock.Now())
	}
}

// ReviseKeys gives every protected local endpoint new key material: it is
// sent to the matched remote endpoints over the volatile secure channel, and
// used once they acknowledged it. Remote senders' previous keys are taken
// for a grace period after their new ones arrive. No-op when not secure.
func (t *Transport) ReviseKeys() {
	t.mu.Lock()
	if t.sec != nil {
		t.sec.reviseKeys(t.cfg.Clock.Now(), true)
		t.kickNeeded = true
	}
	t.finishLocked()
}

// decodePayload returns the plain payload of a sample of remote writer w
// for local reader e; ok false drops it.
func (s *secState) decodePayload(e wire.EntityID, w wire.GUID, data []byte) ([]byte, bool) {
	l := s.local[e]
	if l == nil || !l.payload {
		return data, true
	}
	r := s.remotes[w.Prefix]
	if r == nil {
		s.st.UnauthenticatedDropped++
		return nil, false
	}
	h, err := crypto.ParseHeader(data)
	if err != nil {
		s.st.Unprotected++
		return nil, false
	}
	o := r.openers[h.KeyID]
	if o == nil {
		s.st.Refused++
		s.ctr.UnknownKey.Add(1)
		return nil, false
	}
	out, err := o.DecodePayload(nil, data)
	if err != nil {
		s.st.Refused++
		return nil, false
	}
	return out, true
}

// stats returns the counters.
func (s *secState) stats() SecurityStats {
	st := s.st
	st.UnknownKey = s.ctr.UnknownKey.Load()
	st.BadMAC = s.ctr.Auth.Load() + s.ctr.ReceiverMAC.Load()
	st.Replayed = s.ctr.Replay.Load()
	st.Malformed = s.ctr.Malformed.Load() + s.ctr.Protection.Load()
	return st
}

// secureDiscovery is discovery's secure configuration (nil when not
// secure).
func (t *Transport) secureDiscovery() *discovery.Secure {
	if t.sec == nil {
		return nil
	}
	return t.sec.discoveryConfig()
}

// wirePayload is what publisher p's writer sends for data (t.mu held).
func (t *Transport) wirePayload(p *Publisher, data []byte) ([]byte, error) {
	if t.sec == nil {
		return data, nil
	}
	out, err := t.sec.encodePayload(p.guid.Entity, data)
	if err != nil {
		return nil, fmt.Errorf("rtps: publish on %s: %w", p.ed.TopicName, err)
	}
	return out, nil
}
