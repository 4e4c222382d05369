package access

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
)

// DN is a parsed distinguished name: attribute type (canonical upper-case
// short name) and value pairs.
type DN []DNAttr

// DNAttr is one attribute of a DN.
type DNAttr struct{ Type, Value string }

var dnAliases = map[string]string{
	"COMMONNAME": "CN", "COUNTRYNAME": "C", "LOCALITYNAME": "L", "STATEORPROVINCENAME": "ST", "S": "ST",
	"ORGANIZATIONNAME": "O", "ORGANIZATIONALUNITNAME": "OU", "E": "EMAILADDRESS",
	"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O", "2.5.4.11": "OU",
	"1.2.840.113549.1.9.1": "EMAILADDRESS", "SERIALNUMBER": "SERIALNUMBER", "2.5.4.5": "SERIALNUMBER",
}

// ParseDN parses an RFC 4514 distinguished name ("CN=/talker,O=ROS"):
// ',' or ';' separate RDNs, '+' multi-valued ones (taken as separate
// attributes), '\' escapes a character or two hex digits.
func ParseDN(s string) (DN, error) {
	var dn DN
	var typ, val strings.Builder
	inValue := false
	flush := func() error {
		t := strings.ToUpper(strings.TrimSpace(typ.String()))
		if t == "" {
			return fmt.Errorf("distinguished name %q: empty attribute type", s)
		}
		if a, ok := dnAliases[t]; ok {
			t = a
		}
		dn = append(dn, DNAttr{Type: t, Value: strings.TrimSpace(val.String())})
		typ.Reset()
		val.Reset()
		inValue = false
		return nil
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty distinguished name")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case !inValue && c == '=':
			inValue = true
		case !inValue:
			typ.WriteByte(c)
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("distinguished name %q: trailing backslash", s)
			}
			if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				b, _ := hex.DecodeString(s[i+1 : i+3])
				val.Write(b)
				i += 2
			} else {
				val.WriteByte(s[i+1])
				i++
			}
		case c == ',' || c == ';' || c == '+':
			if err := flush(); err != nil {
				return nil, err
			}
		default:
			val.WriteByte(c)
		}
	}
	if !inValue {
		return nil, fmt.Errorf("distinguished name %q: attribute without '='", s)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return dn, nil
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// Equal reports whether two DNs have the same attributes, in any order.
func (d DN) Equal(o DN) bool {
	if len(d) != len(o) {
		return false
	}
	a, b := d.sorted(), o.sorted()
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (d DN) sorted() []DNAttr {
	s := append([]DNAttr(nil), d...)
	sort.Slice(s, func(i, j int) bool {
		if s[i].Type != s[j].Type {
			return s[i].Type < s[j].Type
		}
		return s[i].Value < s[j].Value
	})
	return s
}
