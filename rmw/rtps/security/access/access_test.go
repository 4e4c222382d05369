package access

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// sros2's default governance (policy/defaults/dds/governance.xml) with
// domain 0.
const sros2Governance = `<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
    <domain_access_rules>
        <domain_rule>
            <domains>
              <id>0</id>
            </domains>
            <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
            <enable_join_access_control>true</enable_join_access_control>
            <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
            <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
            <rtps_protection_kind>SIGN</rtps_protection_kind>
            <topic_access_rules>
                <topic_rule>
                    <topic_expression>*</topic_expression>
                    <enable_discovery_protection>true</enable_discovery_protection>
                    <enable_liveliness_protection>true</enable_liveliness_protection>
                    <enable_read_access_control>true</enable_read_access_control>
                    <enable_write_access_control>true</enable_write_access_control>
                    <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
                    <data_protection_kind>ENCRYPT</data_protection_kind>
                </topic_rule>
            </topic_access_rules>
        </domain_rule>
    </domain_access_rules>
</dds>
`

const permissionsXML = `<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="/simtimer">
      <subject_name>CN=/simtimer</subject_name>
      <validity>
        <not_before>2020-01-01T00:00:00</not_before>
        <not_after>2040-01-01T00:00:00</not_after>
      </validity>
      <deny_rule>
        <domains><id>0</id></domains>
        <publish><topics><topic>rt/secret*</topic></topics></publish>
      </deny_rule>
      <deny_rule>
        <domains><id_range><min>0</min><max>5</max></id_range></domains>
        <subscribe><topics><topic>rt/clock</topic></topics></subscribe>
      </deny_rule>
      <allow_rule>
        <domains><id>0</id></domains>
        <publish><topics><topic>rt/*</topic></topics></publish>
        <subscribe><topics><topic>rt/*</topic></topics></subscribe>
      </allow_rule>
      <allow_rule>
        <domains><id>7</id></domains>
        <publish><partitions><partition>p*</partition></partitions><topics><topic>rt/part</topic></topics></publish>
      </allow_rule>
      <default>DENY</default>
    </grant>
    <grant name="other">
      <subject_name>emailAddress=a@b.c, CN=Main Publisher,O=eProsima,C=ES</subject_name>
      <validity>
        <not_before>2013-06-01T13:00:00</not_before>
        <not_after>2038-06-01T13:00:00Z</not_after>
      </validity>
      <default>ALLOW</default>
    </grant>
  </permissions>
</dds>
`

func TestGovernanceSROS2Default(t *testing.T) {
	g, err := ParseGovernance([]byte(sros2Governance))
	if err != nil {
		t.Fatal(err)
	}
	r, err := g.DomainRule(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.DomainRule(1); err == nil || !strings.Contains(err.Error(), "domain 1") {
		t.Fatalf("domain 1: %v", err)
	}
	if r.AllowUnauthenticatedParticipants || !r.EnableJoinAccessControl || r.RTPSProtection != ProtectionSign ||
		r.DiscoveryProtection != ProtectionEncrypt {
		t.Fatalf("rule %+v", r)
	}
	pi := r.ParticipantSecurityInfo()
	// rtps SIGN, discovery and liveliness ENCRYPT (Cyclone's mapping)
	if pi.Attributes != AttributesIsValid|0x7 || pi.PluginAttributes != AttributesIsValid|PluginParticipantIsDiscoveryEncrypted|PluginParticipantIsLivelinessEncrypted {
		t.Fatalf("participant info %#x %#x", pi.Attributes, pi.PluginAttributes)
	}
	tr, err := r.TopicRule("rt/clock")
	if err != nil {
		t.Fatal(err)
	}
	ei := tr.EndpointSecurityInfo()
	if ei.Attributes != AttributesIsValid|0x7f || ei.PluginAttributes != AttributesIsValid|PluginEndpointIsSubmessageEncrypted|PluginEndpointIsPayloadEncrypted {
		t.Fatalf("endpoint info %#x %#x", ei.Attributes, ei.PluginAttributes)
	}
	vs := r.BuiltinEndpointSecurityInfo(BuiltinVolatileSecure)
	if !vs.Has(EndpointIsSubmessageProtected) || !vs.PluginHas(PluginEndpointIsSubmessageEncrypted) {
		t.Fatalf("volatile secure %+v", vs)
	}
}

func TestGovernanceErrors(t *testing.T) {
	for _, c := range []struct{ edit, want string }{
		{"<rtps_protection_kind>SIGN</rtps_protection_kind>", "missing <rtps_protection_kind>"},
		{"<data_protection_kind>ENCRYPT</data_protection_kind>", "missing <data_protection_kind>"},
		{"<id>0</id>", "empty <domains>"},
	} {
		doc := strings.Replace(sros2Governance, c.edit, "", 1)
		if _, err := ParseGovernance([]byte(doc)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("without %s: %v, want %q", c.edit, err, c.want)
		}
	}
	doc := strings.Replace(sros2Governance, "<data_protection_kind>ENCRYPT", "<data_protection_kind>ENCRYPT_WITH_ORIGIN_AUTHENTICATION", 1)
	if _, err := ParseGovernance([]byte(doc)); err == nil {
		t.Error("data protection with origin authentication accepted (BasicProtectionKind has none)")
	}
	if _, err := ParseGovernance([]byte("<dds/>")); err == nil {
		t.Error("empty governance accepted")
	}
}

func TestPermissionsDecisions(t *testing.T) {
	p, err := ParsePermissions([]byte(permissionsXML))
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.FindGrant("CN=/simtimer")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CheckValidity(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if err := g.CheckValidity(time.Date(2041, 1, 1, 0, 0, 0, 0, time.UTC)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired grant: %v", err)
	}
	if err := g.CheckJoin(0); err != nil {
		t.Fatal(err)
	}
	if err := g.CheckJoin(3); err == nil {
		t.Fatal("join of domain 3 (only deny rules) allowed")
	}
	cases := []struct {
		op     Op
		d      int
		topic  string
		parts  []string
		denied string // "" = allowed
	}{
		{OpSubscribe, 0, "rt/clock", nil, `permissions deny subscribe to rt/clock: grant "/simtimer", deny_rule #2`},
		{OpPublish, 0, "rt/clock", nil, ""},
		{OpPublish, 0, "rt/secret/x", nil, `deny_rule #1`},
		{OpSubscribe, 0, "rt/chatter", nil, ""},
		{OpSubscribe, 0, "rq/x", nil, `default DENY`},
		{OpPublish, 7, "rt/part", []string{"px"}, ""},
		{OpPublish, 7, "rt/part", []string{"px", "q"}, "default DENY"},
		{OpPublish, 7, "rt/part", nil, "default DENY"}, // default partition not listed
		{OpPublish, 0, "rt/x", []string{"p"}, "default DENY"},
	}
	for _, c := range cases {
		err := g.Check(c.op, c.d, c.topic, c.parts)
		if c.denied == "" {
			if err != nil {
				t.Errorf("%s %s d%d %v: %v", c.op, c.topic, c.d, c.parts, err)
			}
			continue
		}
		var de *DeniedError
		if !errors.As(err, &de) || !strings.Contains(err.Error(), c.denied) {
			t.Errorf("%s %s d%d %v: %v, want %q", c.op, c.topic, c.d, c.parts, err, c.denied)
		}
	}
	// DN matching ignores order, case of types and spaces
	if _, err := p.FindGrant("C=ES,O=eProsima,CN=Main Publisher,EMAILADDRESS=a@b.c"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.FindGrant("CN=/nobody"); err == nil {
		t.Fatal("unknown subject found a grant")
	}
}

func TestParseDN(t *testing.T) {
	a, err := ParseDN(`CN=a\,b,O=x`)
	if err != nil || len(a) != 2 || a[0].Value != "a,b" {
		t.Fatalf("%v %v", a, err)
	}
	b, _ := ParseDN("o=x ,  commonName=a\\2cb")
	if !a.Equal(b) {
		t.Fatalf("%v != %v", a, b)
	}
	for _, bad := range []string{"", "CN", "=x", `CN=x\`} {
		if _, err := ParseDN(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParseGovernance(f *testing.F) {
	f.Add([]byte(sros2Governance))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGovernance(b)
		if err != nil {
			return
		}
		for i := range g.DomainRules {
			r := &g.DomainRules[i]
			_ = r.ParticipantSecurityInfo()
			if tr, err := r.TopicRule("rt/clock"); err == nil {
				_ = tr.EndpointSecurityInfo()
			}
		}
	})
}

func FuzzParsePermissions(f *testing.F) {
	f.Add([]byte(permissionsXML))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePermissions(b)
		if err != nil {
			return
		}
		for i := range p.Grants {
			g := &p.Grants[i]
			_ = g.CheckJoin(0)
			_ = g.Check(OpSubscribe, 0, "rt/clock", []string{"", "a"})
		}
		_, _ = p.FindGrant("CN=/x")
	})
}

func FuzzParseDN(f *testing.F) {
	f.Add("CN=/talker,O=ROS")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDN(s)
		if err == nil && !d.Equal(d) {
			t.Fatal("DN not equal to itself")
		}
	})
}
