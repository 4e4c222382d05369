package ros

import (
	"strings"
	"testing"
)

// FuzzParseToken: any string either fails with ErrToken or parses into an
// entity whose rebuilt token parses into the same entity and is stable.
func FuzzParseToken(f *testing.F) {
	for _, v := range tokenVectors {
		f.Add(v.token)
	}
	f.Add("@ros2_lv/0/f00d/0/1/MP/%/%/n/%t/T_/h/::,:,:,:,,/backends:cpu:")
	f.Add("@ros2_lv/0/f00d/0/0/NN/%/%/n")
	f.Add("@ros2_lv//////////")
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseToken(s)
		if err != nil {
			return
		}
		tok, err := e.Token()
		if err != nil {
			// a chunk a key expression forbids (a peer's token never has one)
			if strings.ContainsAny(s, "*$#?") {
				return
			}
			t.Fatalf("%q parsed but does not rebuild: %v", s, err)
		}
		e2, err := ParseToken(tok)
		if err != nil {
			t.Fatalf("rebuilt %q does not parse: %v", tok, err)
		}
		if *e2 != *e {
			t.Fatalf("rebuilt entity differs:\n%+v\n%+v", *e, *e2)
		}
		if tok2, _ := e2.Token(); tok2 != tok {
			t.Fatalf("token not stable: %q then %q", tok, tok2)
		}
		_, _ = e.EndpointInfo()
	})
}

// FuzzParseProfile: parsing never panics; what parses formats to a string
// that parses to the same profile.
func FuzzParseProfile(f *testing.F) {
	f.Add("::,10:,:,:,,")
	f.Add("2::,1:,:,:,,")
	f.Add("1:2:1,42:9223372036,854775807:1,2:3,4,5")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseProfile(s)
		if err != nil {
			return
		}
		q, err := ParseProfile(p.String())
		if err != nil || q != p {
			t.Fatalf("%q: %+v -> %q -> %+v %v", s, p, p.String(), q, err)
		}
		_ = p.QoS()
	})
}

// FuzzParseAdvKey: no panic; a parsed key's parts rebuild it.
func FuzzParseAdvKey(f *testing.F) {
	f.Add("0/t/T_/h/@adv/pub/f00d/12/_")
	f.Add("0/t/T_/h/@adv/sub/f00d/uhlc/a/b")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAdvKey(s)
		if err != nil {
			return
		}
		ent := "sub"
		if a.Publisher {
			ent = "pub"
		}
		id := "uhlc"
		if a.Sequenced {
			id = strings.TrimSpace(strings.Split(s[len(a.Key)+len("/@adv/")+len(ent)+1+len(a.ZID)+1:], "/")[0])
		}
		if got := a.Key + "/@adv/" + ent + "/" + a.ZID + "/" + id + "/" + a.Meta; got != s {
			t.Fatalf("%q rebuilt as %q", s, got)
		}
	})
}
