package gen

import (
	"go/parser"
	"go/token"
	"maps"
	"testing"

	"github.com/nros-go/nros/internal/idl"
	"github.com/nros-go/nros/internal/idl/interfaces"
)

// FuzzGenerate checks that any definition the parser accepts yields Go
// source that parses (names, literals, comments and constants all survive
// the trip), and that the generator never panics.
func FuzzGenerate(f *testing.F) {
	for _, s := range []string{
		"int32 a\n",
		"# doc\nstring<=3[<=2] s [\"a\", 'b']\nfloat64 X=1.5\n",
		"std_msgs/Header header\nuint8[] d [1,2]\nwstring w \"ハ\"\n",
		"float32 F=inf\nfloat64 G=nan\nbool b true\nchar C=7\nstring S=\"*/\\\"\"\n",
		"Other[3] o\nint64[<=2] q [-9223372036854775808]\n",
	} {
		f.Add([]byte(s))
	}
	bundled := interfaces.NewSet()
	if err := bundled.LoadBundled(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := idl.ParseMessage("p", "Msg", src, "Msg.msg")
		if err != nil {
			return
		}
		other := &idl.Msg{Package: "p", Namespace: "msg", Name: "Other", Fields: []idl.Field{{Name: "x", Type: idl.Type{Kind: idl.Int8}}}}
		set := &interfaces.Set{Packages: maps.Clone(bundled.Packages)}
		set.Packages["p"] = &interfaces.Package{Name: "p", Msgs: []*idl.Msg{m, other}}
		if set.Check([]string{"p"}) != nil {
			return
		}
		files, err := Generate(set, "p", Options{ImportPrefix: "x/msg"})
		if err != nil {
			t.Fatalf("generation failed for an accepted definition: %v\n%s", err, src)
		}
		for name, code := range files {
			if _, err := parser.ParseFile(token.NewFileSet(), name, code, parser.ParseComments); err != nil {
				t.Fatalf("%s does not parse: %v\n%s", name, err, code)
			}
		}
	})
}
