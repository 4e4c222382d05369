package access

import (
	"crypto/x509"
	"fmt"
	"strings"
	"time"

	"github.com/nros-go/nros/rmw/rtps/security/smime"
	"github.com/nros-go/nros/rmw/rtps/security/token"
)

// Token class ids and property names of the builtin access-control plugin.
const (
	PermissionsTokenClassID           = "DDS:Access:Permissions:1.0"
	PermissionsCredentialTokenClassID = "DDS:Access:PermissionsCredential"
	PropPermCASN                      = "dds.perm_ca.sn"
	PropPermCAAlgo                    = "dds.perm_ca.algo"
	PropPermCert                      = "dds.perm.cert"
)

// Config is what a local participant's access control starts from.
type Config struct {
	// Domain is the DDS domain id.
	Domain int
	// Governance and Permissions are the contents of governance.p7s and
	// permissions.p7s.
	Governance, Permissions []byte
	// PermissionsCA is the certificate of permissions_ca.cert.pem.
	PermissionsCA *x509.Certificate
	// Identity is the participant's identity certificate (cert.pem).
	Identity *x509.Certificate
	// Now is the time validity is checked at.
	Now time.Time
}

// Local is the access control of a local participant: verified documents,
// its domain rule and its grant.
type Local struct {
	Domain      int
	Governance  *Governance
	Rule        *DomainRule
	Permissions *Permissions
	Grant       *Grant
	ca          *x509.Certificate
	permDoc     []byte
}

// DocumentError is a governance or permissions document that was refused
// (bad signature, not XML, no rule for the domain): it names the file.
type DocumentError struct {
	File string // "governance.p7s" or "permissions.p7s"
	Err  error
}

// Error implements the error interface.
func (e *DocumentError) Error() string { return e.File + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *DocumentError) Unwrap() error { return e.Err }

// NewLocal verifies the governance and permissions documents against the
// permissions CA, finds the domain rule for the domain and the grant for the
// identity's subject, checks the grant's validity and, when the governance
// enables join access control, that the grant lets the participant join.
func NewLocal(c Config) (*Local, error) {
	if c.PermissionsCA == nil || c.Identity == nil {
		return nil, fmt.Errorf("access: permissions CA and identity certificate are required")
	}
	gdoc, err := smime.Verify(c.Governance, c.PermissionsCA, c.Now)
	if err != nil {
		return nil, &DocumentError{"governance.p7s", err}
	}
	gov, err := ParseGovernance(gdoc)
	if err != nil {
		return nil, &DocumentError{"governance.p7s", err}
	}
	rule, err := gov.DomainRule(c.Domain)
	if err != nil {
		return nil, &DocumentError{"governance.p7s", err}
	}
	l := &Local{Domain: c.Domain, Governance: gov, Rule: rule, ca: c.PermissionsCA, permDoc: c.Permissions}
	l.Permissions, l.Grant, err = checkPermissions(c.Permissions, c.PermissionsCA, c.Identity, c.Now)
	if err != nil {
		return nil, &DocumentError{"permissions.p7s", err}
	}
	if rule.EnableJoinAccessControl {
		if err := l.Grant.CheckJoin(c.Domain); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func checkPermissions(doc []byte, ca, identity *x509.Certificate, now time.Time) (*Permissions, *Grant, error) {
	pdoc, err := smime.Verify(doc, ca, now)
	if err != nil {
		return nil, nil, err
	}
	perms, err := ParsePermissions(pdoc)
	if err != nil {
		return nil, nil, err
	}
	grant, err := perms.FindGrant(identity.Subject.String())
	if err != nil {
		return nil, nil, err
	}
	if err := grant.CheckValidity(now); err != nil {
		return nil, nil, err
	}
	return perms, grant, nil
}

// ParticipantSecurityInfo is the local PID_PARTICIPANT_SECURITY_INFO.
func (l *Local) ParticipantSecurityInfo() ParticipantSecurityInfo {
	return l.Rule.ParticipantSecurityInfo()
}

// AllowUnauthenticatedParticipants reports whether the governance lets
// participants without security match the local one.
func (l *Local) AllowUnauthenticatedParticipants() bool {
	return l.Rule.AllowUnauthenticatedParticipants
}

// CheckCreateWriter decides whether the local participant may publish
// topic (the DDS topic name, "rt/clock") in the given partitions, and
// returns the writer's security info.
func (l *Local) CheckCreateWriter(topic string, partitions []string) (EndpointSecurityInfo, error) {
	return l.checkLocal(OpPublish, topic, partitions)
}

// CheckCreateReader is CheckCreateWriter for subscribing.
func (l *Local) CheckCreateReader(topic string, partitions []string) (EndpointSecurityInfo, error) {
	return l.checkLocal(OpSubscribe, topic, partitions)
}

func (l *Local) checkLocal(op Op, topic string, partitions []string) (EndpointSecurityInfo, error) {
	tr, err := l.Rule.TopicRule(topic)
	if err != nil {
		return EndpointSecurityInfo{}, err
	}
	if (op == OpPublish && tr.EnableWriteAccessControl) || (op == OpSubscribe && tr.EnableReadAccessControl) {
		if err := l.Grant.Check(op, l.Domain, topic, partitions); err != nil {
			return EndpointSecurityInfo{}, err
		}
	}
	return tr.EndpointSecurityInfo(), nil
}

// EndpointSecurityInfo returns the masks of a user endpoint on topic.
func (l *Local) EndpointSecurityInfo(topic string) (EndpointSecurityInfo, error) {
	tr, err := l.Rule.TopicRule(topic)
	if err != nil {
		return EndpointSecurityInfo{}, err
	}
	return tr.EndpointSecurityInfo(), nil
}

// PermissionsToken is the token the local participant announces in SPDP
// (PID_PERMISSIONS_TOKEN). Its properties (dds.perm_ca.sn, dds.perm_ca.algo)
// are kept but not propagated, as Cyclone DDS 0.10 does: Fast DDS 2.9
// refuses a remote participant whose dds.perm_ca.algo differs from its own
// value ("ECDSA-SHA256", the CA's signature algorithm, where the spec and we
// say "EC-prime256v1"), and checks nothing when the properties are absent.
func (l *Local) PermissionsToken() token.DataHolder {
	return token.DataHolder{ClassID: PermissionsTokenClassID, Properties: []token.Property{
		{Name: PropPermCASN, Value: token.OnelineName(l.ca.RawSubject), Propagate: false},
		{Name: PropPermCAAlgo, Value: token.CertAlgo(l.ca), Propagate: false},
	}}
}

// PermissionsCredentialToken is the local credential handed to the
// authentication plugin: it carries permissions.p7s, sent as c.perm in the
// handshake. It is not propagated.
func (l *Local) PermissionsCredentialToken() token.DataHolder {
	return token.DataHolder{ClassID: PermissionsCredentialTokenClassID, Properties: []token.Property{
		{Name: PropPermCert, Value: string(l.permDoc)},
	}}
}

// PermissionsDocument returns the signed permissions document (c.perm).
func (l *Local) PermissionsDocument() []byte { return l.permDoc }

// CheckPermissionsToken checks a remote PermissionsToken's class (same
// plugin, major version 1).
func CheckPermissionsToken(t *token.DataHolder) error {
	if !strings.HasPrefix(t.ClassID, "DDS:Access:Permissions:1.") {
		return fmt.Errorf("access: remote permissions token class %q is not DDS:Access:Permissions:1.x", t.ClassID)
	}
	return nil
}

// Remote is the access control of an authenticated remote participant.
type Remote struct {
	local       *Local
	Subject     string
	Permissions *Permissions
	Grant       *Grant
}

// ValidateRemote checks a remote participant after its handshake: its
// permissions document (c.perm) must be signed by the local permissions CA,
// hold a grant for the subject of its (authenticated) identity certificate,
// be valid now and, with join access control, let it join the domain.
func (l *Local) ValidateRemote(permissionsDoc []byte, identity *x509.Certificate, now time.Time) (*Remote, error) {
	perms, grant, err := checkPermissions(permissionsDoc, l.ca, identity, now)
	if err != nil {
		return nil, fmt.Errorf("remote %q: permissions: %w", identity.Subject.String(), err)
	}
	if l.Rule.EnableJoinAccessControl {
		if err := grant.CheckJoin(l.Domain); err != nil {
			return nil, fmt.Errorf("remote %q: %w", identity.Subject.String(), err)
		}
	}
	return &Remote{local: l, Subject: identity.Subject.String(), Permissions: perms, Grant: grant}, nil
}

// CheckRemoteWriter decides whether the remote participant may publish
// topic (a writer it announced), under the local governance.
func (r *Remote) CheckRemoteWriter(topic string, partitions []string) error {
	return r.check(OpPublish, topic, partitions)
}

// CheckRemoteReader decides whether the remote participant may subscribe.
func (r *Remote) CheckRemoteReader(topic string, partitions []string) error {
	return r.check(OpSubscribe, topic, partitions)
}

func (r *Remote) check(op Op, topic string, partitions []string) error {
	tr, err := r.local.Rule.TopicRule(topic)
	if err != nil {
		return err
	}
	if (op == OpPublish && !tr.EnableWriteAccessControl) || (op == OpSubscribe && !tr.EnableReadAccessControl) {
		return nil
	}
	if err := r.Grant.Check(op, r.local.Domain, topic, partitions); err != nil {
		return fmt.Errorf("remote %q: %w", r.Subject, err)
	}
	return nil
}
