package auth

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"io"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/token"
)

// ChallengeSize is the size of challenge1/challenge2 (256 bits).
const ChallengeSize = 32

// Role says which side of the handshake the local participant plays.
type Role int

// Roles. The participant with the smaller GUID initiates (as both vendors
// decide in validate_remote_identity).
const (
	Initiator Role = iota
	Replier
)

// String implements fmt.Stringer.
func (r Role) String() string {
	if r == Initiator {
		return "initiator"
	}
	return "replier"
}

// Config is the local side of handshakes.
type Config struct {
	Local *Identity
	// Permissions is the signed permissions document sent as c.perm
	// (permissions.p7s, as the permissions credential token carries it).
	Permissions []byte
	// PData is c.pdata: the local participant's SPDP data as a big-endian
	// parameter list without encapsulation header (PID_PARTICIPANT_GUID must
	// carry Local.GUIDPrefix).
	PData []byte
	// KeyAgreement is what an initiator proposes: KAgreeECDH (default, what
	// Cyclone DDS uses) or KAgreeDH (Fast DDS's default).
	KeyAgreement string
	// DHAsDER encodes our DH+MODP public value as a DER INTEGER (Cyclone
	// DDS's form) when we initiate with KAgreeDH; a replier always answers
	// in the initiator's form.
	DHAsDER bool
	// Rand is the randomness source (crypto/rand when nil).
	Rand io.Reader
	// ResendPeriod is how often Tick hands back the last message while no
	// answer came (default 1 s); Timeout is how long a handshake may take
	// from its start (default 60 s).
	ResendPeriod, Timeout time.Duration
}

// Secret is key material; it formats as "[secret]" so it never reaches a log.
type Secret []byte

// String hides the value.
func (Secret) String() string { return "[secret]" }

// GoString hides the value.
func (Secret) GoString() string { return "[secret]" }

// Format hides the value for every verb.
func (Secret) Format(f fmt.State, _ rune) { io.WriteString(f, "[secret]") }

// SharedSecret is what the crypto plugin derives keys from
// (SharedSecretHandle): both challenges and the hashed key-agreement output.
type SharedSecret struct {
	Challenge1, Challenge2 [ChallengeSize]byte
	Secret                 Secret
}

// Result is a completed handshake.
type Result struct {
	SharedSecret SharedSecret
	// RemoteCert is the authenticated identity certificate of the peer.
	RemoteCert *x509.Certificate
	// RemotePermissions is the peer's c.perm (its permissions.p7s), for the
	// access-control plugin to verify and parse.
	RemotePermissions []byte
	// RemotePData is the peer's c.pdata.
	RemotePData []byte
	// KeyAgreement is the algorithm used.
	KeyAgreement string
}

type state int

const (
	stIdle state = iota
	stWaitReply
	stWaitRequest
	stWaitFinal
	stDone
	stFailed
)

// Handshake is the PKI-DH state machine with one remote participant. It
// does no I/O: the transport passes in the tokens it receives
// (HandleMessage) and sends the ones returned, calls Tick to resend and to
// time out, and collects Result when Done. Not safe for concurrent use.
type Handshake struct {
	cfg        Config
	role       Role
	remote     GUIDPrefix
	rnd        io.Reader
	started    time.Time
	lastSent   time.Time
	lastOut    *token.DataHolder
	lastIn     *token.DataHolder
	st         state
	err        error
	kagree     string
	ka         keyAgreement
	lchallenge [ChallengeSize]byte
	rchallenge *[ChallengeSize]byte // from an AuthRequest, or learnt
	hashC1     [32]byte
	hashC2     [32]byte
	dh1, dh2   []byte
	remoteCert *x509.Certificate
	remotePerm []byte
	remotePD   []byte
	result     *Result
}

// New starts the handshake with a remote participant whose SPDP announced
// remoteGUID and remoteIdentity (validate_remote_identity). now is the
// start of the handshake (for Timeout).
func New(cfg Config, remote GUIDPrefix, remoteIdentity *token.DataHolder, now time.Time) (*Handshake, error) {
	if cfg.Local == nil {
		return nil, fmt.Errorf("auth: no local identity")
	}
	if err := CheckIdentityToken(remoteIdentity); err != nil {
		return nil, err
	}
	if cfg.KeyAgreement == "" {
		cfg.KeyAgreement = KAgreeECDH
	}
	if cfg.KeyAgreement != KAgreeECDH && cfg.KeyAgreement != KAgreeDH {
		return nil, fmt.Errorf("auth: unknown key agreement %q", cfg.KeyAgreement)
	}
	if cfg.ResendPeriod <= 0 {
		cfg.ResendPeriod = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	h := &Handshake{cfg: cfg, remote: remote, rnd: cfg.Rand, started: now}
	if h.rnd == nil {
		h.rnd = rand.Reader
	}
	if _, err := io.ReadFull(h.rnd, h.lchallenge[:]); err != nil {
		return nil, err
	}
	local := MakeGUID(cfg.Local.GUIDPrefix, EntityParticipant)
	rem := MakeGUID(remote, EntityParticipant)
	switch c := bytes.Compare(local[:], rem[:]); {
	case c < 0:
		h.role = Initiator
	case c > 0:
		h.role = Replier
		h.st = stWaitRequest
	default:
		return nil, fmt.Errorf("auth: remote participant has our own GUID prefix %x", remote[:])
	}
	return h, nil
}

// Role returns the local role.
func (h *Handshake) Role() Role { return h.role }

// Done reports whether the handshake completed.
func (h *Handshake) Done() bool { return h.st == stDone }

// Err returns the error that failed the handshake, if any.
func (h *Handshake) Err() error { return h.err }

// Result returns the completed handshake (nil until Done).
func (h *Handshake) Result() *Result { return h.result }

// AuthRequest returns our AuthRequestMessageToken (class AuthReq, property
// future_challenge): optional; Cyclone DDS sends one before the handshake,
// and the challenge it carries is the one we then use.
func (h *Handshake) AuthRequest() token.DataHolder {
	return token.DataHolder{ClassID: ClassAuthRequest, BinaryProperties: []token.BinaryProperty{
		{Name: "future_challenge", Value: append([]byte(nil), h.lchallenge[:]...), Propagate: true}}}
}

// HandleAuthRequest records the future challenge of the peer's
// AuthRequestMessageToken: its handshake messages must then carry it.
func (h *Handshake) HandleAuthRequest(t *token.DataHolder) error {
	if !bytes.HasPrefix([]byte(t.ClassID), []byte(ClassAuthRequest)) {
		return fmt.Errorf("%w: auth request class %q", ErrBadToken, t.ClassID)
	}
	v, ok := t.BinProp("future_challenge")
	if !ok || len(v) != ChallengeSize {
		return fmt.Errorf("%w: auth request without a 32-byte future_challenge", ErrBadToken)
	}
	if h.st == stWaitRequest || h.st == stIdle {
		var c [ChallengeSize]byte
		copy(c[:], v)
		h.rchallenge = &c
	}
	return nil
}

func (h *Handshake) fail(err error) error {
	h.st = stFailed
	h.err = err
	return err
}

func (h *Handshake) sent(t token.DataHolder, now time.Time) *token.DataHolder {
	h.lastOut = &t
	h.lastSent = now
	return &t
}

// Begin makes the handshake request (initiator only).
func (h *Handshake) Begin(now time.Time) (*token.DataHolder, error) {
	if h.role != Initiator || h.st != stIdle {
		return nil, fmt.Errorf("%w: Begin as %s", ErrState, h.role)
	}
	h.kagree = h.cfg.KeyAgreement
	ka, err := newKeyAgreement(h.kagree, h.rnd, h.cfg.DHAsDER)
	if err != nil {
		return nil, h.fail(err)
	}
	h.ka = ka
	h.dh1 = ka.public()
	cs := h.localC(h.kagree)
	h.hashC1 = hashC(cs)
	props := append(cs,
		bp("hash_c1", h.hashC1[:]),
		bp("dh1", h.dh1),
		bp("challenge1", h.lchallenge[:]))
	h.st = stWaitReply
	return h.sent(token.DataHolder{ClassID: ClassRequest, BinaryProperties: props}, now), nil
}

// Tick resends the last message when ResendPeriod passed without an
// answer (the stateless message channel is best effort) and fails the
// handshake after Timeout. It returns the token to send again, if any.
func (h *Handshake) Tick(now time.Time) (*token.DataHolder, error) {
	switch h.st {
	case stDone:
		return nil, nil
	case stFailed:
		return nil, h.err
	}
	if now.Sub(h.started) >= h.cfg.Timeout {
		return nil, h.fail(fmt.Errorf("%w after %v (%s, remote %x)", ErrTimeout, h.cfg.Timeout, h.role, h.remote[:]))
	}
	if h.lastOut != nil && now.Sub(h.lastSent) >= h.cfg.ResendPeriod {
		h.lastSent = now
		return h.lastOut, nil
	}
	return nil, nil
}

// HandleMessage processes a received handshake token and returns the token
// to send in answer (nil when none): a replier answers a Request with a
// Reply, an initiator a Reply with a Final. A repeated message (the peer
// resent it) gets the same answer again. Any failure is final and wraps one
// of the Err* sentinels; it names no secret.
func (h *Handshake) HandleMessage(in *token.DataHolder, now time.Time) (*token.DataHolder, error) {
	if h.st == stFailed {
		return nil, h.err
	}
	if h.lastIn != nil && h.lastIn.Equal(in) {
		return h.lastOut, nil // a retransmission of what we answered
	}
	var out *token.DataHolder
	var err error
	switch {
	case h.st == stWaitRequest && hasPrefix(in.ClassID, ClassRequest):
		out, err = h.onRequest(in, now)
	case h.st == stWaitReply && hasPrefix(in.ClassID, ClassReply):
		out, err = h.onReply(in, now)
	case h.st == stWaitFinal && hasPrefix(in.ClassID, ClassFinal):
		err = h.onFinal(in)
	case h.st == stDone:
		return nil, nil // late duplicate
	default:
		return nil, fmt.Errorf("%w: %q while %s is %s", ErrState, in.ClassID, h.role, h.stName())
	}
	if err != nil {
		return nil, h.fail(fmt.Errorf("handshake with %x as %s: %w", h.remote[:], h.role, err))
	}
	cp := *in
	h.lastIn = &cp
	return out, nil
}

func (h *Handshake) stName() string {
	return [...]string{"idle", "waiting for a reply", "waiting for a request", "waiting for the final message", "done", "failed"}[h.st]
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func bp(name string, v []byte) token.BinaryProperty {
	return token.BinaryProperty{Name: name, Value: v, Propagate: true}
}

// localC returns our c.* properties in the order hashed.
func (h *Handshake) localC(kagree string) []token.BinaryProperty {
	return []token.BinaryProperty{
		bp("c.id", h.cfg.Local.certPEM),
		bp("c.perm", h.cfg.Permissions),
		bp("c.pdata", h.cfg.PData),
		bp("c.dsign_algo", []byte(h.cfg.Local.dsignName())),
		bp("c.kagree_algo", []byte(kagree)),
	}
}

func hashC(cs []token.BinaryProperty) [32]byte {
	return sha256.Sum256(token.EncodeBinaryPropertiesBE(cs))
}

// strProp compares a string binary property with or without Cyclone's NUL.
func strProp(v []byte) string { return string(bytes.TrimSuffix(v, []byte{0})) }

func need(t *token.DataHolder, name string) ([]byte, error) {
	v, ok := t.BinProp(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s has no %s", ErrBadToken, t.ClassID, name)
	}
	return v, nil
}

func needLen(t *token.DataHolder, name string, n int) ([]byte, error) {
	v, err := need(t, name)
	if err == nil && len(v) != n {
		err = fmt.Errorf("%w: %s is %d bytes, want %d", ErrBadToken, name, len(v), n)
	}
	return v, err
}

// checkC validates the peer's c.* properties (Request or Reply) and
// returns their hash, its key-agreement algorithm.
func (h *Handshake) checkC(in *token.DataHolder, now time.Time) ([32]byte, string, error) {
	var names = []string{"c.id", "c.perm", "c.pdata", "c.dsign_algo", "c.kagree_algo"}
	cs := make([]token.BinaryProperty, len(names))
	for i, n := range names {
		v, err := need(in, n)
		if err != nil {
			return [32]byte{}, "", err
		}
		cs[i] = bp(n, v)
	}
	cert, err := parseCertProp(cs[0].Value)
	if err != nil {
		return [32]byte{}, "", err
	}
	if err := CheckCertificate(cert, h.cfg.Local.CA, now); err != nil {
		return [32]byte{}, "", err
	}
	if err := h.cfg.Local.checkRevoked(cert); err != nil {
		return [32]byte{}, "", err
	}
	g, err := ParticipantGUIDFromPData(cs[2].Value)
	if err != nil {
		return [32]byte{}, "", err
	}
	if g.Prefix() != h.remote || !PrefixMatchesCert(g.Prefix(), cert.RawSubject) {
		return [32]byte{}, "", fmt.Errorf("%w: c.pdata GUID prefix %x, discovered %x, certificate %q", ErrGUID, g[:12], h.remote[:], cert.Subject)
	}
	// The signature is verified according to the certificate's key, as
	// Cyclone DDS does: Fast DDS names c.dsign_algo after the algorithm the
	// CA signed the certificate with, so an RSA identity under an ECDSA CA
	// says "ECDSA-SHA256" and signs with RSASSA-PSS.
	switch d := strProp(cs[3].Value); d {
	case DSignECDSA, DSignRSA:
	default:
		return [32]byte{}, "", fmt.Errorf("%w: c.dsign_algo %q not supported", ErrBadToken, d)
	}
	ka := strProp(cs[4].Value)
	if ka != KAgreeECDH && ka != KAgreeDH {
		return [32]byte{}, "", fmt.Errorf("%w: c.kagree_algo %q not supported", ErrBadToken, ka)
	}
	h.remoteCert = cert
	h.remotePerm = cs[1].Value
	h.remotePD = cs[2].Value
	return hashC(cs), ka, nil
}

// optionalEqual checks an optional property against what it must be.
func optionalEqual(in *token.DataHolder, name string, want []byte, sentinel error) error {
	if v, ok := in.BinProp(name); ok && !bytes.Equal(v, want) {
		return fmt.Errorf("%w: %s differs from ours", sentinel, name)
	}
	return nil
}

func sigInput(props ...token.BinaryProperty) []byte { return token.EncodeBinaryPropertiesBE(props) }

// onRequest is begin_handshake_reply.
func (h *Handshake) onRequest(in *token.DataHolder, now time.Time) (*token.DataHolder, error) {
	hc1, ka, err := h.checkC(in, now)
	if err != nil {
		return nil, err
	}
	h.hashC1 = hc1
	if err := optionalEqual(in, "hash_c1", hc1[:], ErrHash); err != nil {
		return nil, err
	}
	dh1, err := need(in, "dh1")
	if err != nil {
		return nil, err
	}
	der := false
	if ka == KAgreeDH {
		if _, der, err = decodeDHPublic(dh1); err != nil {
			return nil, err
		}
	}
	c1, err := needLen(in, "challenge1", ChallengeSize)
	if err != nil {
		return nil, err
	}
	if h.rchallenge != nil && !bytes.Equal(h.rchallenge[:], c1) {
		return nil, fmt.Errorf("%w: challenge1 is not the peer's future_challenge", ErrChallenge)
	}
	var rc [ChallengeSize]byte
	copy(rc[:], c1)
	h.rchallenge = &rc
	h.kagree = ka
	if h.ka, err = newKeyAgreement(ka, h.rnd, der); err != nil {
		return nil, err
	}
	h.dh1 = append([]byte(nil), dh1...)
	h.dh2 = h.ka.public()
	cs := h.localC(ka)
	h.hashC2 = hashC(cs)
	sig, err := h.cfg.Local.sign(h.rnd, sigInput(bp("hash_c2", h.hashC2[:]), bp("challenge2", h.lchallenge[:]), bp("dh2", h.dh2),
		bp("challenge1", rc[:]), bp("dh1", h.dh1), bp("hash_c1", h.hashC1[:])))
	if err != nil {
		return nil, fmt.Errorf("signing the reply: %w", err)
	}
	props := append(cs,
		bp("hash_c2", h.hashC2[:]), bp("dh2", h.dh2), bp("hash_c1", h.hashC1[:]), bp("dh1", h.dh1),
		bp("challenge1", rc[:]), bp("challenge2", h.lchallenge[:]), bp("signature", sig))
	h.st = stWaitFinal
	return h.sent(token.DataHolder{ClassID: ClassReply, BinaryProperties: props}, now), nil
}

// onReply is process_handshake on the initiator.
func (h *Handshake) onReply(in *token.DataHolder, now time.Time) (*token.DataHolder, error) {
	hc2, ka, err := h.checkC(in, now)
	if err != nil {
		return nil, err
	}
	if ka != h.kagree {
		return nil, fmt.Errorf("%w: reply c.kagree_algo %s, we proposed %s", ErrBadToken, ka, h.kagree)
	}
	h.hashC2 = hc2
	if err := optionalEqual(in, "hash_c2", hc2[:], ErrHash); err != nil {
		return nil, err
	}
	if err := optionalEqual(in, "hash_c1", h.hashC1[:], ErrHash); err != nil {
		return nil, err
	}
	if err := optionalEqual(in, "dh1", h.dh1, ErrBadToken); err != nil {
		return nil, err
	}
	dh2, err := need(in, "dh2")
	if err != nil {
		return nil, err
	}
	c1, err := needLen(in, "challenge1", ChallengeSize)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(c1, h.lchallenge[:]) {
		return nil, fmt.Errorf("%w: challenge1 of the reply is not ours", ErrChallenge)
	}
	c2, err := needLen(in, "challenge2", ChallengeSize)
	if err != nil {
		return nil, err
	}
	if h.rchallenge != nil && !bytes.Equal(c2, h.rchallenge[:]) {
		return nil, fmt.Errorf("%w: challenge2 is not the peer's future_challenge", ErrChallenge)
	}
	sig, err := need(in, "signature")
	if err != nil {
		return nil, err
	}
	if err := verify(h.remoteCert, sigInput(bp("hash_c2", hc2[:]), bp("challenge2", c2), bp("dh2", dh2),
		bp("challenge1", h.lchallenge[:]), bp("dh1", h.dh1), bp("hash_c1", h.hashC1[:])), sig); err != nil {
		return nil, fmt.Errorf("reply from %q: %w", h.remoteCert.Subject, err)
	}
	raw, err := h.ka.shared(dh2)
	if err != nil {
		return nil, err
	}
	h.dh2 = append([]byte(nil), dh2...)
	var rc [ChallengeSize]byte
	copy(rc[:], c2)
	h.rchallenge = &rc
	fsig, err := h.cfg.Local.sign(h.rnd, sigInput(bp("hash_c1", h.hashC1[:]), bp("challenge1", h.lchallenge[:]), bp("dh1", h.dh1),
		bp("challenge2", rc[:]), bp("dh2", h.dh2), bp("hash_c2", h.hashC2[:])))
	if err != nil {
		return nil, fmt.Errorf("signing the final message: %w", err)
	}
	h.finish(raw, h.lchallenge, rc)
	return h.sent(token.DataHolder{ClassID: ClassFinal, BinaryProperties: []token.BinaryProperty{
		bp("hash_c1", h.hashC1[:]), bp("hash_c2", h.hashC2[:]), bp("dh1", h.dh1), bp("dh2", h.dh2),
		bp("challenge1", h.lchallenge[:]), bp("challenge2", rc[:]), bp("signature", fsig)}}, now), nil
}

// onFinal is process_handshake on the replier.
func (h *Handshake) onFinal(in *token.DataHolder) error {
	c1, err := needLen(in, "challenge1", ChallengeSize)
	if err != nil {
		return err
	}
	if !bytes.Equal(c1, h.rchallenge[:]) {
		return fmt.Errorf("%w: challenge1 of the final message is not the request's", ErrChallenge)
	}
	c2, err := needLen(in, "challenge2", ChallengeSize)
	if err != nil {
		return err
	}
	if !bytes.Equal(c2, h.lchallenge[:]) {
		return fmt.Errorf("%w: challenge2 of the final message is not ours", ErrChallenge)
	}
	for _, o := range []struct {
		name string
		v    []byte
		s    error
	}{{"dh1", h.dh1, ErrBadToken}, {"dh2", h.dh2, ErrBadToken}, {"hash_c1", h.hashC1[:], ErrHash}, {"hash_c2", h.hashC2[:], ErrHash}} {
		if err := optionalEqual(in, o.name, o.v, o.s); err != nil {
			return err
		}
	}
	sig, err := need(in, "signature")
	if err != nil {
		return err
	}
	if err := verify(h.remoteCert, sigInput(bp("hash_c1", h.hashC1[:]), bp("challenge1", c1), bp("dh1", h.dh1),
		bp("challenge2", h.lchallenge[:]), bp("dh2", h.dh2), bp("hash_c2", h.hashC2[:])), sig); err != nil {
		return fmt.Errorf("final message from %q: %w", h.remoteCert.Subject, err)
	}
	raw, err := h.ka.shared(h.dh1)
	if err != nil {
		return err
	}
	h.finish(raw, *h.rchallenge, h.lchallenge)
	h.lastOut = nil
	return nil
}

func (h *Handshake) finish(raw []byte, c1, c2 [ChallengeSize]byte) {
	sum := sha256.Sum256(raw)
	clear(raw)
	h.result = &Result{
		SharedSecret:      SharedSecret{Challenge1: c1, Challenge2: c2, Secret: Secret(sum[:])},
		RemoteCert:        h.remoteCert,
		RemotePermissions: h.remotePerm,
		RemotePData:       h.remotePD,
		KeyAgreement:      h.kagree,
	}
	h.ka = nil
	h.st = stDone
}

// String describes the handshake (role, state, remote) without key material.
func (h *Handshake) String() string {
	return fmt.Sprintf("PKI-DH handshake with %x: %s, %s", h.remote[:], h.role, h.stName())
}

func (id *Identity) dsignName() string {
	if id.dsignLabel != "" {
		return id.dsignLabel
	}
	return dsignAlgo(id.Cert.PublicKey)
}
