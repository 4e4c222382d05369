package keystore

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"sort"
	"strings"
	"time"
)

// DefaultPolicyXML is sros2's default policy (policy/defaults/policy.xml):
// everything allowed. create_enclave uses it with the enclave's path.
const DefaultPolicyXML = `<?xml version="1.0" encoding="UTF-8"?>
<policy version="0.2.0">
  <enclaves>
    <enclave path="/">
      <profiles>
        <profile ns="/" node="default">
          <topics publish="ALLOW" subscribe="ALLOW">
            <topic>/*</topic>
          </topics>
          <services reply="ALLOW" request="ALLOW">
            <service>/*</service>
          </services>
          <actions call="ALLOW" execute="ALLOW">
            <action>/*</action>
          </actions>
        </profile>
      </profiles>
    </enclave>
  </enclaves>
</policy>
`

// Policy is an sros2 policy document (version 0.2.0).
type Policy struct {
	Enclaves []PolicyEnclave
}

// PolicyEnclave is an <enclave path="...">.
type PolicyEnclave struct {
	Path     string
	Profiles [][]PolicyProfile // one slice per <profiles> element
}

// PolicyProfile is a <profile ns node> and its permission lists in order.
type PolicyProfile struct {
	NS, Node string
	Lists    []PolicyList
}

// PolicyList is a <topics>, <services> or <actions> element.
type PolicyList struct {
	Kind  string            // "topics", "services" or "actions"
	Attrs map[string]string // publish/subscribe, request/reply, call/execute → ALLOW|DENY
	Names []string
}

type xmlPolicy struct {
	XMLName  xml.Name `xml:"policy"`
	Version  string   `xml:"version,attr"`
	Enclaves []struct {
		Path     string `xml:"path,attr"`
		Profiles []struct {
			Profiles []struct {
				NS    string `xml:"ns,attr"`
				Node  string `xml:"node,attr"`
				Lists []struct {
					XMLName xml.Name
					Attrs   []xml.Attr `xml:",any,attr"`
					Names   []struct {
						XMLName xml.Name
						Value   string `xml:",chardata"`
					} `xml:",any"`
				} `xml:",any"`
			} `xml:"profile"`
		} `xml:"profiles"`
	} `xml:"enclaves>enclave"`
}

var listAttrs = map[string][2]string{
	"topics":   {"publish", "subscribe"},
	"services": {"reply", "request"},
	"actions":  {"call", "execute"},
}

var listItem = map[string]string{"topics": "topic", "services": "service", "actions": "action"}

// ParsePolicy parses and checks a policy document as sros2's policy.xsd
// does. A document with XIncludes needs ParsePolicyFile.
func ParsePolicy(b []byte) (*Policy, error) {
	doc, err := resolveIncludes(b, "")
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	return parsePolicy(doc)
}

func parsePolicy(b []byte) (*Policy, error) {
	var x xmlPolicy
	if err := xml.Unmarshal(b, &x); err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if x.Version != "0.2.0" {
		return nil, fmt.Errorf("policy: version %q, want 0.2.0", x.Version)
	}
	if len(x.Enclaves) == 0 {
		return nil, fmt.Errorf("policy: no <enclave>")
	}
	p := &Policy{}
	for _, xe := range x.Enclaves {
		e := PolicyEnclave{Path: xe.Path}
		if e.Path == "" {
			return nil, fmt.Errorf("policy: <enclave> without path")
		}
		if len(xe.Profiles) == 0 {
			return nil, fmt.Errorf("policy: enclave %q has no <profiles>", e.Path)
		}
		for _, xps := range xe.Profiles {
			var profs []PolicyProfile
			if len(xps.Profiles) == 0 {
				return nil, fmt.Errorf("policy: enclave %q: <profiles> without <profile>", e.Path)
			}
			for _, xp := range xps.Profiles {
				prof := PolicyProfile{NS: xp.NS, Node: xp.Node}
				for _, xl := range xp.Lists {
					kind := xl.XMLName.Local
					allowed, ok := listAttrs[kind]
					if !ok {
						return nil, fmt.Errorf("policy: enclave %q profile %s/%s: unknown element <%s>", e.Path, xp.NS, xp.Node, kind)
					}
					l := PolicyList{Kind: kind, Attrs: map[string]string{}}
					for _, a := range xl.Attrs {
						if a.Name.Local == "base" {
							continue
						}
						if a.Name.Local != allowed[0] && a.Name.Local != allowed[1] {
							return nil, fmt.Errorf("policy: <%s> has attribute %q (want %s or %s)", kind, a.Name.Local, allowed[0], allowed[1])
						}
						if a.Value != "ALLOW" && a.Value != "DENY" {
							return nil, fmt.Errorf("policy: <%s %s=%q>: want ALLOW or DENY", kind, a.Name.Local, a.Value)
						}
						l.Attrs[a.Name.Local] = a.Value
					}
					for _, n := range xl.Names {
						if n.XMLName.Local != listItem[kind] {
							return nil, fmt.Errorf("policy: <%s> contains <%s>", kind, n.XMLName.Local)
						}
						l.Names = append(l.Names, n.Value)
					}
					if len(l.Names) == 0 {
						return nil, fmt.Errorf("policy: empty <%s>", kind)
					}
					prof.Lists = append(prof.Lists, l)
				}
				profs = append(profs, prof)
			}
			e.Profiles = append(e.Profiles, profs)
		}
		p.Enclaves = append(p.Enclaves, e)
	}
	return p, nil
}

// PermissionsParams are the values sros2 passes to its permissions.xsl.
type PermissionsParams struct {
	DomainID            string
	NotBefore, NotAfter time.Time
	// RosDiscoveryTopic adds an allow_rule for ros_discovery_info.
	RosDiscoveryTopic bool
}

// fqn resolves a policy name relative to its profile as permissions.xsl
// does: absolute names as they are, "~x" under ns/node, others under ns.
func fqn(name, ns, node string) string {
	delim := ns
	if !strings.HasSuffix(delim, "/") {
		delim += "/"
	}
	switch {
	case strings.HasPrefix(name, "/"):
		return name
	case strings.HasPrefix(name, "~"):
		return delim + node + name[1:]
	default:
		return delim + name
	}
}

type pubsub struct{ pub, sub [][]string } // groups of topics, one per translated element

// translate appends the DDS topics of one list for one qualifier.
func translate(l PolicyList, qualifier string, ns, node string, out *pubsub) {
	names := func(f func(string) []string) []string {
		var r []string
		for _, n := range l.Names {
			r = append(r, f(fqn(n, ns, node))...)
		}
		return r
	}
	one := func(prefix, suffix string) func(string) []string {
		return func(n string) []string { return []string{prefix + n + suffix} }
	}
	actReq := func(p string) func(string) []string {
		return func(n string) []string {
			return []string{p + n + "/_action/cancel_goalRequest", p + n + "/_action/get_resultRequest", p + n + "/_action/send_goalRequest"}
		}
	}
	actRep := func(n string) []string {
		return []string{"rr" + n + "/_action/cancel_goalReply", "rr" + n + "/_action/get_resultReply", "rr" + n + "/_action/send_goalReply",
			"rt" + n + "/_action/feedback", "rt" + n + "/_action/status"}
	}
	// the order of xsl TranslatePermissions: publish, subscribe, request, reply, call, execute
	for _, attr := range []string{"publish", "subscribe", "request", "reply", "call", "execute"} {
		if l.Attrs[attr] != qualifier {
			continue
		}
		switch attr {
		case "publish":
			out.pub = append(out.pub, names(one("rt", "")))
		case "subscribe":
			out.sub = append(out.sub, names(one("rt", "")))
		case "request":
			out.pub = append(out.pub, names(one("rq", "Request")))
			out.sub = append(out.sub, names(one("rr", "Reply")))
		case "reply":
			out.pub = append(out.pub, names(one("rr", "Reply")))
			out.sub = append(out.sub, names(one("rq", "Request")))
		case "call":
			out.pub = append(out.pub, names(actReq("rq")))
			out.sub = append(out.sub, names(actRep))
		case "execute":
			out.pub = append(out.pub, names(actRep))
			out.sub = append(out.sub, names(actReq("rq")))
		}
	}
}

// merge sorts the groups by their first topic (stable, as the xsl's
// xsl:sort over <topics> elements), concatenates them and drops repeats.
func merge(groups [][]string) []string {
	sort.SliceStable(groups, func(i, j int) bool { return groups[i][0] < groups[j][0] })
	seen := map[string]bool{}
	var out []string
	for _, g := range groups {
		for _, t := range g {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// PermissionsXML transforms the enclave of the policy whose path is
// enclave into a DDS permissions document, as sros2's permissions.xsl does:
// a grant per <profiles>, subject CN=<enclave>, validity from the
// certificate, a deny_rule and an allow_rule (each with the domain id and
// the publish/subscribe topics the profile lists translate to: rt/ for
// topics, rq/…Request and rr/…Reply for services, the _action/ topics for
// actions), an allow_rule for ros_discovery_info, default DENY.
func (p *Policy) PermissionsXML(enclave string, pp PermissionsParams) ([]byte, error) {
	var e *PolicyEnclave
	for i := range p.Enclaves {
		if p.Enclaves[i].Path == enclave {
			e = &p.Enclaves[i]
			break
		}
	}
	if e == nil {
		return nil, fmt.Errorf("policy has no enclave %q", enclave)
	}
	dom := xmlEscape(pp.DomainID)
	var b bytes.Buffer
	b.WriteString(`<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">` + "\n")
	b.WriteString("  <permissions>\n")
	topics := func(tag string, ts []string) {
		if len(ts) == 0 {
			return
		}
		fmt.Fprintf(&b, "        <%s>\n          <topics>\n", tag)
		for _, t := range ts {
			fmt.Fprintf(&b, "            <topic>%s</topic>\n", xmlEscape(t))
		}
		fmt.Fprintf(&b, "          </topics>\n        </%s>\n", tag)
	}
	rule := func(tag string, ps pubsub) {
		fmt.Fprintf(&b, "      <%s>\n        <domains>\n          <id>%s</id>\n        </domains>\n", tag, dom)
		if len(ps.pub) > 0 {
			topics("publish", merge(ps.pub))
		}
		if len(ps.sub) > 0 {
			topics("subscribe", merge(ps.sub))
		}
		fmt.Fprintf(&b, "      </%s>\n", tag)
	}
	for _, profs := range e.Profiles {
		fmt.Fprintf(&b, "    <grant name=\"%s\">\n", xmlEscape(enclave))
		fmt.Fprintf(&b, "      <subject_name>CN=%s</subject_name>\n", xmlEscape(enclave))
		fmt.Fprintf(&b, "      <validity>\n        <not_before>%s</not_before>\n        <not_after>%s</not_after>\n      </validity>\n",
			pp.NotBefore.UTC().Format("2006-01-02T15:04:05"), pp.NotAfter.UTC().Format("2006-01-02T15:04:05"))
		for _, q := range []struct{ qual, tag string }{{"DENY", "deny_rule"}, {"ALLOW", "allow_rule"}} {
			var ps pubsub
			has := false
			for _, prof := range profs {
				for _, l := range prof.Lists {
					for _, v := range l.Attrs {
						if v == q.qual {
							has = true
						}
					}
					translate(l, q.qual, prof.NS, prof.Node, &ps)
				}
			}
			if has {
				rule(q.tag, ps)
			}
		}
		if pp.RosDiscoveryTopic {
			rule("allow_rule", pubsub{pub: [][]string{{"ros_discovery_info"}}, sub: [][]string{{"ros_discovery_info"}}})
		}
		b.WriteString("      <default>DENY</default>\n    </grant>\n")
	}
	b.WriteString("  </permissions>\n</dds>\n")
	return b.Bytes(), nil
}
