package access

import (
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

// Action is ALLOW or DENY.
type Action int

// Actions.
const (
	Deny Action = iota
	Allow
)

// String implements fmt.Stringer.
func (a Action) String() string {
	if a == Allow {
		return "ALLOW"
	}
	return "DENY"
}

// Criteria is one <publish>, <subscribe> or <relay> element of a rule.
type Criteria struct {
	// Topics are fnmatch expressions of DDS topic names.
	Topics []string
	// Partitions are fnmatch expressions; nil means the element had no
	// <partitions>, which stands for the default (empty) partition only.
	Partitions []string
}

// Rule is an allow_rule or deny_rule.
type Rule struct {
	Action    Action
	Domains   DomainSet
	Publish   []Criteria
	Subscribe []Criteria
	Relay     []Criteria
	// Index is the 1-based position among the rules of its grant, and
	// KindIndex among the rules of its kind ("deny_rule #2").
	Index, KindIndex int
}

// Name is "allow_rule #n" or "deny_rule #n".
func (r *Rule) Name() string {
	if r.Action == Allow {
		return fmt.Sprintf("allow_rule #%d", r.KindIndex)
	}
	return fmt.Sprintf("deny_rule #%d", r.KindIndex)
}

// Grant is a permissions grant.
type Grant struct {
	Name        string
	SubjectName string
	NotBefore   time.Time
	NotAfter    time.Time
	Rules       []Rule
	Default     Action
}

// Permissions is a parsed permissions document.
type Permissions struct {
	Grants []Grant
}

type xmlCriteria struct {
	Topics     *[]string `xml:"topics>topic"`
	Partitions *[]string `xml:"partitions>partition"`
}

type xmlRule struct {
	XMLName   xml.Name
	Domains   *xmlDomains   `xml:"domains"`
	Publish   []xmlCriteria `xml:"publish"`
	Subscribe []xmlCriteria `xml:"subscribe"`
	Relay     []xmlCriteria `xml:"relay"`
}

type xmlGrant struct {
	Name        string    `xml:"name,attr"`
	SubjectName *string   `xml:"subject_name"`
	NotBefore   *string   `xml:"validity>not_before"`
	NotAfter    *string   `xml:"validity>not_after"`
	Rules       []xmlRule `xml:",any"`
	Default     *string   `xml:"default"`
}

type xmlPermissions struct {
	XMLName xml.Name   `xml:"dds"`
	Grants  []xmlGrant `xml:"permissions>grant"`
}

// ParseXMLDate parses an xs:dateTime as the permissions validity uses it;
// without a zone it is UTC.
func ParseXMLDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date-time (YYYY-MM-DDThh:mm:ss[Z|±hh:mm])", s)
}

func convertCriteria(xs []xmlCriteria, where string) ([]Criteria, error) {
	var out []Criteria
	for _, x := range xs {
		var c Criteria
		if x.Topics == nil || len(*x.Topics) == 0 {
			return nil, fmt.Errorf("%s: <%s> without <topics>", where, "publish/subscribe")
		}
		for _, t := range *x.Topics {
			c.Topics = append(c.Topics, strings.TrimSpace(t))
		}
		if x.Partitions != nil {
			c.Partitions = []string{}
			for _, p := range *x.Partitions {
				c.Partitions = append(c.Partitions, strings.TrimSpace(p))
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// ParsePermissions parses a permissions document (the XML inside
// permissions.p7s).
func ParsePermissions(doc []byte) (*Permissions, error) {
	if len(doc) > MaxDocumentSize {
		return nil, fmt.Errorf("permissions: document of %d bytes is too large", len(doc))
	}
	var x xmlPermissions
	if err := xml.Unmarshal(doc, &x); err != nil {
		return nil, fmt.Errorf("permissions: %w", err)
	}
	if len(x.Grants) == 0 {
		return nil, fmt.Errorf("permissions: no <grant>")
	}
	p := &Permissions{}
	for i, xg := range x.Grants {
		where := fmt.Sprintf("permissions: grant %q (#%d)", xg.Name, i+1)
		g := Grant{Name: xg.Name}
		if xg.SubjectName == nil {
			return nil, fmt.Errorf("%s: missing <subject_name>", where)
		}
		g.SubjectName = strings.TrimSpace(*xg.SubjectName)
		if xg.NotBefore == nil || xg.NotAfter == nil {
			return nil, fmt.Errorf("%s: missing <validity><not_before>/<not_after>", where)
		}
		var err error
		if g.NotBefore, err = ParseXMLDate(*xg.NotBefore); err != nil {
			return nil, fmt.Errorf("%s: not_before: %v", where, err)
		}
		if g.NotAfter, err = ParseXMLDate(*xg.NotAfter); err != nil {
			return nil, fmt.Errorf("%s: not_after: %v", where, err)
		}
		if xg.Default == nil {
			return nil, fmt.Errorf("%s: missing <default>", where)
		}
		switch strings.TrimSpace(*xg.Default) {
		case "ALLOW":
			g.Default = Allow
		case "DENY":
			g.Default = Deny
		default:
			return nil, fmt.Errorf("%s: <default> %q is not ALLOW or DENY", where, strings.TrimSpace(*xg.Default))
		}
		nAllow, nDeny := 0, 0
		for _, xr := range xg.Rules {
			var r Rule
			switch xr.XMLName.Local {
			case "allow_rule":
				nAllow++
				r = Rule{Action: Allow, KindIndex: nAllow}
			case "deny_rule":
				nDeny++
				r = Rule{Action: Deny, KindIndex: nDeny}
			default:
				continue // subject_name, validity, default
			}
			r.Index = nAllow + nDeny
			rw := where + " " + r.Name()
			if r.Domains, err = xr.Domains.parse(rw); err != nil {
				return nil, err
			}
			if r.Publish, err = convertCriteria(xr.Publish, rw); err != nil {
				return nil, err
			}
			if r.Subscribe, err = convertCriteria(xr.Subscribe, rw); err != nil {
				return nil, err
			}
			if r.Relay, err = convertCriteria(xr.Relay, rw); err != nil {
				return nil, err
			}
			g.Rules = append(g.Rules, r)
		}
		p.Grants = append(p.Grants, g)
	}
	return p, nil
}

// FindGrant returns the grant whose subject name is the same distinguished
// name as subject (an RFC 4514 string such as "CN=/talker", attribute order
// and type case ignored).
func (p *Permissions) FindGrant(subject string) (*Grant, error) {
	want, err := ParseDN(subject)
	if err != nil {
		return nil, err
	}
	for i := range p.Grants {
		if dn, err := ParseDN(p.Grants[i].SubjectName); err == nil && dn.Equal(want) {
			return &p.Grants[i], nil
		}
	}
	return nil, fmt.Errorf("permissions have no grant for subject %q", subject)
}

// CheckValidity checks now against the grant's validity.
func (g *Grant) CheckValidity(now time.Time) error {
	if now.Before(g.NotBefore) {
		return fmt.Errorf("permissions grant %q is not valid before %s", g.Name, g.NotBefore.UTC().Format(time.RFC3339))
	}
	if !now.Before(g.NotAfter) {
		return fmt.Errorf("permissions grant %q expired at %s", g.Name, g.NotAfter.UTC().Format(time.RFC3339))
	}
	return nil
}

// Op is an operation checked against a grant.
type Op string

// Operations.
const (
	OpJoin      Op = "join"
	OpPublish   Op = "publish"
	OpSubscribe Op = "subscribe"
	OpRelay     Op = "relay"
)

// DeniedError is a refusal by the permissions: it names the operation, the
// topic, the grant and the rule that decided.
type DeniedError struct {
	Op     Op
	Topic  string // "" for join
	Domain int
	Grant  string
	// Rule is "deny_rule #2", "default DENY" or, for join, why no rule applied.
	Rule string
}

// Error implements the error interface.
func (e *DeniedError) Error() string {
	if e.Op == OpJoin {
		return fmt.Sprintf("permissions deny joining domain %d: grant %q, %s", e.Domain, e.Grant, e.Rule)
	}
	return fmt.Sprintf("permissions deny %s to %s: grant %q, %s", e.Op, e.Topic, e.Grant, e.Rule)
}

// CheckJoin decides whether the grant lets its holder join domain d: an
// allow_rule for d, or the default ALLOW.
func (g *Grant) CheckJoin(d int) error {
	for i := range g.Rules {
		if g.Rules[i].Domains.Contains(d) && g.Rules[i].Action == Allow {
			return nil
		}
	}
	if g.Default == Allow {
		return nil
	}
	return &DeniedError{Op: OpJoin, Domain: d, Grant: g.Name, Rule: "no allow_rule for the domain and default DENY"}
}

// Check decides op (publish, subscribe or relay) on topic in domain d with
// the endpoint's partitions (none = the default partition ""). The first
// rule of domain d with a matching criteria decides; an allow rule needs
// every partition allowed, a deny rule any partition denied. Without a
// matching rule the grant's default decides.
func (g *Grant) Check(op Op, d int, topic string, partitions []string) error {
	if len(partitions) == 0 {
		partitions = []string{""}
	}
	for i := range g.Rules {
		r := &g.Rules[i]
		if !r.Domains.Contains(d) {
			continue
		}
		var crit []Criteria
		switch op {
		case OpPublish:
			crit = r.Publish
		case OpSubscribe:
			crit = r.Subscribe
		case OpRelay:
			crit = r.Relay
		default:
			return fmt.Errorf("access: unknown operation %q", op)
		}
		for _, c := range crit {
			if !c.matchesTopic(topic) || !c.matchesPartitions(partitions, r.Action) {
				continue
			}
			if r.Action == Allow {
				return nil
			}
			return &DeniedError{Op: op, Topic: topic, Domain: d, Grant: g.Name, Rule: r.Name()}
		}
	}
	if g.Default == Allow {
		return nil
	}
	return &DeniedError{Op: op, Topic: topic, Domain: d, Grant: g.Name, Rule: "default DENY"}
}

func (c *Criteria) matchesTopic(topic string) bool {
	for _, t := range c.Topics {
		if Match(t, topic) {
			return true
		}
	}
	return false
}

func (c *Criteria) partitionListed(p string) bool {
	pats := c.Partitions
	if pats == nil {
		pats = []string{""}
	}
	for _, pat := range pats {
		if Match(pat, p) {
			return true
		}
	}
	return false
}

func (c *Criteria) matchesPartitions(parts []string, a Action) bool {
	if a == Allow {
		for _, p := range parts {
			if !c.partitionListed(p) {
				return false
			}
		}
		return true
	}
	for _, p := range parts {
		if c.partitionListed(p) {
			return true
		}
	}
	return false
}
