// Package access is the DDS Security builtin access-control plugin
// (DDS:Access:Permissions) as a sans-IO library: it parses the governance
// and permissions documents (after the S/MIME check of package smime),
// answers "may this participant join domain D, publish or subscribe topic
// T" for the local participant and for remote ones (from the permissions
// document they send in the handshake), derives the security-info attribute
// masks the governance selects, and builds the permissions tokens.
//
// Decisions follow the OMG DDS Security 1.1 builtin plugin as Cyclone DDS
// and Fast DDS implement it: the first domain_rule whose domains contain the
// domain applies; within it the first topic_rule whose topic_expression
// matches (fnmatch, '*' crosses '/'); the grant is the one whose subject
// name equals the identity certificate's subject (as distinguished names);
// its allow/deny rules are tried in order, the first one whose domains,
// topic and partitions match decides, else the grant's default.
package access

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
)

// MaxDocumentSize bounds the governance and permissions documents parsed.
const MaxDocumentSize = 4 << 20

// ProtectionKind is a governance protection kind (rtps, discovery,
// liveliness and metadata protection).
type ProtectionKind int

// Protection kinds.
const (
	ProtectionNone ProtectionKind = iota
	ProtectionSign
	ProtectionEncrypt
	ProtectionSignWithOriginAuthentication
	ProtectionEncryptWithOriginAuthentication
)

var protectionNames = []string{"NONE", "SIGN", "ENCRYPT", "SIGN_WITH_ORIGIN_AUTHENTICATION", "ENCRYPT_WITH_ORIGIN_AUTHENTICATION"}

// String implements fmt.Stringer.
func (k ProtectionKind) String() string {
	if int(k) < len(protectionNames) {
		return protectionNames[k]
	}
	return "ProtectionKind(" + strconv.Itoa(int(k)) + ")"
}

// Encrypts reports whether the kind encrypts.
func (k ProtectionKind) Encrypts() bool {
	return k == ProtectionEncrypt || k == ProtectionEncryptWithOriginAuthentication
}

// OriginAuthenticated reports whether the kind adds receiver-specific MACs.
func (k ProtectionKind) OriginAuthenticated() bool {
	return k == ProtectionSignWithOriginAuthentication || k == ProtectionEncryptWithOriginAuthentication
}

func parseProtection(s string, basic bool) (ProtectionKind, error) {
	s = strings.TrimSpace(s)
	for i, n := range protectionNames {
		if s == n && (!basic || i <= int(ProtectionEncrypt)) {
			return ProtectionKind(i), nil
		}
	}
	if basic {
		return 0, fmt.Errorf("%q is not a data protection kind (NONE, SIGN or ENCRYPT)", s)
	}
	return 0, fmt.Errorf("%q is not a protection kind (%s)", s, strings.Join(protectionNames, ", "))
}

// DomainRange is an inclusive range of domain ids; Max < 0 means unbounded.
type DomainRange struct{ Min, Max int }

// DomainSet is the <domains> of a rule.
type DomainSet []DomainRange

// Contains reports whether the set contains domain d.
func (s DomainSet) Contains(d int) bool {
	for _, r := range s {
		if d >= r.Min && (r.Max < 0 || d <= r.Max) {
			return true
		}
	}
	return false
}

// TopicRule is a governance topic_rule.
type TopicRule struct {
	Expression                 string
	EnableDiscoveryProtection  bool
	EnableLivelinessProtection bool
	EnableReadAccessControl    bool
	EnableWriteAccessControl   bool
	MetadataProtection         ProtectionKind
	DataProtection             ProtectionKind // NONE, SIGN or ENCRYPT
	// Index is the 1-based position of the rule in its domain_rule.
	Index int
}

// DomainRule is a governance domain_rule.
type DomainRule struct {
	Domains                          DomainSet
	AllowUnauthenticatedParticipants bool
	EnableJoinAccessControl          bool
	DiscoveryProtection              ProtectionKind
	LivelinessProtection             ProtectionKind
	RTPSProtection                   ProtectionKind
	TopicRules                       []TopicRule
	// Index is the 1-based position of the rule in the document.
	Index int
}

// Governance is a parsed governance document.
type Governance struct {
	DomainRules []DomainRule
}

type xmlDomains struct {
	IDs    []string `xml:"id"`
	Ranges []struct {
		Min string `xml:"min"`
		Max string `xml:"max"`
	} `xml:"id_range"`
}

func (x *xmlDomains) parse(where string) (DomainSet, error) {
	if x == nil {
		return nil, fmt.Errorf("%s: no <domains>", where)
	}
	var s DomainSet
	for _, id := range x.IDs {
		n, err := parseDomainID(id)
		if err != nil {
			return nil, fmt.Errorf("%s: <id>: %v", where, err)
		}
		s = append(s, DomainRange{n, n})
	}
	for _, r := range x.Ranges {
		lo, hi := 0, -1
		var err error
		if strings.TrimSpace(r.Min) == "" && strings.TrimSpace(r.Max) == "" {
			return nil, fmt.Errorf("%s: <id_range> without <min> or <max>", where)
		}
		if strings.TrimSpace(r.Min) != "" {
			if lo, err = parseDomainID(r.Min); err != nil {
				return nil, fmt.Errorf("%s: <id_range><min>: %v", where, err)
			}
		}
		if strings.TrimSpace(r.Max) != "" {
			if hi, err = parseDomainID(r.Max); err != nil {
				return nil, fmt.Errorf("%s: <id_range><max>: %v", where, err)
			}
			if hi < lo {
				return nil, fmt.Errorf("%s: <id_range> max %d below min %d", where, hi, lo)
			}
		}
		s = append(s, DomainRange{lo, hi})
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("%s: empty <domains>", where)
	}
	return s, nil
}

func parseDomainID(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 232 {
		return 0, fmt.Errorf("%q is not a domain id 0..232", strings.TrimSpace(s))
	}
	return n, nil
}

func parseBool(s, what string) (bool, error) {
	switch strings.TrimSpace(s) {
	case "true", "1", "TRUE", "True":
		return true, nil
	case "false", "0", "FALSE", "False":
		return false, nil
	}
	return false, fmt.Errorf("%s: %q is not a boolean", what, strings.TrimSpace(s))
}

type xmlGovernance struct {
	XMLName     xml.Name `xml:"dds"`
	DomainRules []struct {
		Domains                  *xmlDomains `xml:"domains"`
		AllowUnauthenticated     *string     `xml:"allow_unauthenticated_participants"`
		EnableJoinAccessControl  *string     `xml:"enable_join_access_control"`
		DiscoveryProtectionKind  *string     `xml:"discovery_protection_kind"`
		LivelinessProtectionKind *string     `xml:"liveliness_protection_kind"`
		RTPSProtectionKind       *string     `xml:"rtps_protection_kind"`
		TopicRules               []struct {
			Expression                 *string `xml:"topic_expression"`
			EnableDiscoveryProtection  *string `xml:"enable_discovery_protection"`
			EnableLivelinessProtection *string `xml:"enable_liveliness_protection"`
			EnableReadAccessControl    *string `xml:"enable_read_access_control"`
			EnableWriteAccessControl   *string `xml:"enable_write_access_control"`
			MetadataProtectionKind     *string `xml:"metadata_protection_kind"`
			DataProtectionKind         *string `xml:"data_protection_kind"`
		} `xml:"topic_access_rules>topic_rule"`
	} `xml:"domain_access_rules>domain_rule"`
}

func required(p *string, what string) (string, error) {
	if p == nil {
		return "", fmt.Errorf("missing <%s>", what)
	}
	return *p, nil
}

// ParseGovernance parses a governance document (the XML inside
// governance.p7s). Every element the XSD requires must be present.
func ParseGovernance(doc []byte) (*Governance, error) {
	if len(doc) > MaxDocumentSize {
		return nil, fmt.Errorf("governance: document of %d bytes is too large", len(doc))
	}
	var x xmlGovernance
	if err := xml.Unmarshal(doc, &x); err != nil {
		return nil, fmt.Errorf("governance: %w", err)
	}
	if len(x.DomainRules) == 0 {
		return nil, fmt.Errorf("governance: no <domain_rule>")
	}
	g := &Governance{}
	for i, xr := range x.DomainRules {
		where := fmt.Sprintf("governance: domain_rule #%d", i+1)
		r := DomainRule{Index: i + 1}
		var err error
		if r.Domains, err = xr.Domains.parse(where); err != nil {
			return nil, err
		}
		bools := []struct {
			p    *string
			name string
			dst  *bool
		}{
			{xr.AllowUnauthenticated, "allow_unauthenticated_participants", &r.AllowUnauthenticatedParticipants},
			{xr.EnableJoinAccessControl, "enable_join_access_control", &r.EnableJoinAccessControl},
		}
		for _, b := range bools {
			s, err := required(b.p, b.name)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			if *b.dst, err = parseBool(s, b.name); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
		}
		kinds := []struct {
			p    *string
			name string
			dst  *ProtectionKind
		}{
			{xr.DiscoveryProtectionKind, "discovery_protection_kind", &r.DiscoveryProtection},
			{xr.LivelinessProtectionKind, "liveliness_protection_kind", &r.LivelinessProtection},
			{xr.RTPSProtectionKind, "rtps_protection_kind", &r.RTPSProtection},
		}
		for _, k := range kinds {
			s, err := required(k.p, k.name)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			if *k.dst, err = parseProtection(s, false); err != nil {
				return nil, fmt.Errorf("%s: <%s>: %v", where, k.name, err)
			}
		}
		for j, xt := range xr.TopicRules {
			tw := fmt.Sprintf("%s topic_rule #%d", where, j+1)
			t := TopicRule{Index: j + 1}
			s, err := required(xt.Expression, "topic_expression")
			if err != nil {
				return nil, fmt.Errorf("%s: %v", tw, err)
			}
			t.Expression = strings.TrimSpace(s)
			tb := []struct {
				p    *string
				name string
				dst  *bool
			}{
				{xt.EnableDiscoveryProtection, "enable_discovery_protection", &t.EnableDiscoveryProtection},
				{xt.EnableLivelinessProtection, "enable_liveliness_protection", &t.EnableLivelinessProtection},
				{xt.EnableReadAccessControl, "enable_read_access_control", &t.EnableReadAccessControl},
				{xt.EnableWriteAccessControl, "enable_write_access_control", &t.EnableWriteAccessControl},
			}
			for _, b := range tb {
				s, err := required(b.p, b.name)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", tw, err)
				}
				if *b.dst, err = parseBool(s, b.name); err != nil {
					return nil, fmt.Errorf("%s: %v", tw, err)
				}
			}
			if s, err = required(xt.MetadataProtectionKind, "metadata_protection_kind"); err != nil {
				return nil, fmt.Errorf("%s: %v", tw, err)
			}
			if t.MetadataProtection, err = parseProtection(s, false); err != nil {
				return nil, fmt.Errorf("%s: <metadata_protection_kind>: %v", tw, err)
			}
			if s, err = required(xt.DataProtectionKind, "data_protection_kind"); err != nil {
				return nil, fmt.Errorf("%s: %v", tw, err)
			}
			if t.DataProtection, err = parseProtection(s, true); err != nil {
				return nil, fmt.Errorf("%s: <data_protection_kind>: %v", tw, err)
			}
			r.TopicRules = append(r.TopicRules, t)
		}
		g.DomainRules = append(g.DomainRules, r)
	}
	return g, nil
}

// DomainRule returns the first domain rule that applies to domain d.
func (g *Governance) DomainRule(d int) (*DomainRule, error) {
	for i := range g.DomainRules {
		if g.DomainRules[i].Domains.Contains(d) {
			return &g.DomainRules[i], nil
		}
	}
	return nil, fmt.Errorf("governance has no domain_rule for domain %d", d)
}

// TopicRule returns the first topic rule whose expression matches topic
// (the DDS topic name, "rt/clock").
func (r *DomainRule) TopicRule(topic string) (*TopicRule, error) {
	for i := range r.TopicRules {
		if Match(r.TopicRules[i].Expression, topic) {
			return &r.TopicRules[i], nil
		}
	}
	return nil, fmt.Errorf("governance domain_rule #%d has no topic_rule matching %q", r.Index, topic)
}
