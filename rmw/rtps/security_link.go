package rtps

import (
	"errors"
	"time"

	"github.com/nros-go/nros/rmw/rtps/discovery"
	"github.com/nros-go/nros/rmw/rtps/security/keystore"
	"github.com/nros-go/nros/rmw/rtps/wire"
)

// ErrSecurityNotLinked is returned by New for a Config with Security set,
// and by SecurityFromEnv when ROS_SECURITY_ENABLE=true, in a program that
// did not link DDS Security: see EnableSecurity.
var ErrSecurityNotLinked = errors.New(`rtps: SROS2 (DDS Security) is not linked into this program: import _ "github.com/nros-go/nros/sros2"`)

// security is what the transport calls of DDS Security (secure.go's
// secState). The transport holds it as an interface so that a program that
// never calls EnableSecurity does not link the plugins (certificates, XML,
// big-number and elliptic-curve code: about 1.5 MB of the binary, resident
// in every process).
type security interface {
	checkLocal(ed *wire.EndpointData, writer bool) error
	admitRemote(e *discovery.Endpoint) bool
	writerReady(w wire.EntityID, g wire.GUID) bool
	forget(prefix wire.GuidPrefix)
	forgetLocal(g wire.GUID)
	forgetRemote(g wire.GUID)
	syncTokensLocked(now int64)
	reviseKeys(now int64, all bool)
	discoveryConfig() *discovery.Secure
	encodePayload(e wire.EntityID, data []byte) ([]byte, error)
	decodePayload(e wire.EntityID, w wire.GUID, data []byte) ([]byte, bool)
	protect(msg []byte) []byte
	unprotect(msg []byte) []byte
	handleSubmessage(now int64, rs *wire.ReceiverState, sm *wire.Submessage) bool
	onSPDP(now int64, prefix wire.GuidPrefix)
	tick(now int64) int64
	stats() SecurityStats
}

// secHandleSubmessageLocked passes a submessage to DDS Security (t.mu
// held). The receiver state and submessage are copied into t's scratch
// first: handed through the interface, the caller's own (on its stack)
// would escape, and every datagram would allocate its wire.Reader.
func (t *Transport) secHandleSubmessageLocked(now int64, rs *wire.ReceiverState, sm *wire.Submessage) bool {
	t.secRS, t.secSM = *rs, *sm
	return t.sec.handleSubmessage(now, &t.secRS, &t.secSM)
}

// The two entry points into DDS Security, set by EnableSecurity; nil in a
// program that does not link it.
var (
	newSecurity   func(t *Transport, a *keystore.Artifacts, now time.Time) (security, error)
	loadArtifacts func(dir string, now time.Time) (*keystore.Artifacts, error)
)

// EnableSecurity links DDS Security (the SROS2 builtin plugins) into the
// program, so that New accepts a Config with Security set and
// SecurityFromEnv loads a keystore. Importing package
// github.com/nros-go/nros/sros2 calls it; a program that imports neither
// does not carry the plugins' code, and asking it for security fails with
// ErrSecurityNotLinked. It is safe to call more than once, and must be
// called before New (an init function is the place).
func EnableSecurity() {
	newSecurity = func(t *Transport, a *keystore.Artifacts, now time.Time) (security, error) {
		s, err := newSecState(t, a, now)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	loadArtifacts = keystore.Load
}

// SecurityLinked reports whether EnableSecurity was called.
func SecurityLinked() bool { return newSecurity != nil }

// SecurityFromEnv resolves the SROS2 environment (ROS_SECURITY_ENABLE,
// ROS_SECURITY_STRATEGY, ROS_SECURITY_KEYSTORE,
// ROS_SECURITY_ENCLAVE_OVERRIDE, read through getenv) and the enclave
// argument (--enclave/-e; "" means "/") at now. It returns nil artifacts
// when security is disabled. On an error the Selection's Strategy says what
// to do: Enforce refuses to start (the error names the file), Permissive
// runs unsecured with a warning. With security enabled in a program that
// did not link it (EnableSecurity), the error is ErrSecurityNotLinked.
func SecurityFromEnv(getenv func(string) string, enclave string, now time.Time) (*keystore.Artifacts, keystore.Selection, error) {
	load := loadArtifacts
	if load == nil {
		load = func(string, time.Time) (*keystore.Artifacts, error) { return nil, ErrSecurityNotLinked }
	}
	return keystore.Resolve(keystore.EnvFrom(getenv), enclave, now, load)
}
