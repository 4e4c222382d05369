package idl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseMessage(t *testing.T) {
	src := `# A test message.
# Second line.

# comment for A
int32 A=-5 # trailing
string S="a \"q\""
std_msgs/Header header
Point p  # local
float64[9] cov [1,2,3,4,5,6,7,8,9]
string<=4[<=2] names ["ab", 'c,d']
uint8[] data
  # continues data
bool flag true
time t
`
	m, err := ParseMessage("geometry_msgs", "", []byte(src), "geometry_msgs/msg/Test.msg")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "Test" || m.FullName() != "geometry_msgs/msg/Test" {
		t.Errorf("name %q %q", m.Name, m.FullName())
	}
	if m.Comment != "A test message.\nSecond line." {
		t.Errorf("file comment %q", m.Comment)
	}
	if len(m.Constants) != 2 || m.Constants[0].Value.Int != -5 || m.Constants[0].Comment != "comment for A\ntrailing" ||
		m.Constants[1].Value.Str != `a "q"` {
		t.Errorf("constants %+v", m.Constants)
	}
	want := []string{"std_msgs/Header header", "geometry_msgs/Point p", "float64[9] cov", "string<=4[<=2] names",
		"uint8[] data", "bool flag", "builtin_interfaces/Time t"}
	if len(m.Fields) != len(want) {
		t.Fatalf("fields %+v", m.Fields)
	}
	for i, f := range m.Fields {
		if got := f.Type.String() + " " + f.Name; got != want[i] {
			t.Errorf("field %d = %q, want %q", i, got, want[i])
		}
	}
	if f := m.Fields[2]; f.Default == nil || len(f.Default.List) != 9 || f.Default.List[8].Float != 9 {
		t.Errorf("cov default %+v", f.Default)
	}
	if f := m.Fields[3]; f.Default == nil || len(f.Default.List) != 2 || f.Default.List[1].Str != "c,d" {
		t.Errorf("names default %+v", f.Default)
	}
	if f := m.Fields[4]; f.Comment != "continues data" {
		t.Errorf("data comment %q", f.Comment)
	}
	if f := m.Fields[1]; f.Comment != "local" || f.Line != 8 {
		t.Errorf("p comment %q line %d", f.Comment, f.Line)
	}
	if f := m.Fields[5]; !f.Default.Bool {
		t.Errorf("flag default")
	}
}

func TestParseServiceAction(t *testing.T) {
	s, err := ParseService("std_srvs", "SetBool", []byte("bool data\n---\nbool success\nstring message\n"), "SetBool.srv")
	if err != nil {
		t.Fatal(err)
	}
	if s.Request.Name != "SetBool_Request" || s.Response.Name != "SetBool_Response" || len(s.Response.Fields) != 2 ||
		s.Request.FullName() != "std_srvs/srv/SetBool_Request" {
		t.Errorf("%+v %+v", s.Request, s.Response)
	}
	if _, err := ParseService("std_srvs", "Empty", []byte("---\n"), "Empty.srv"); err != nil {
		t.Error(err)
	}
	a, err := ParseAction("p", "Fibonacci", []byte("int32 order\n---\nint32[] sequence\n---\nint32[] partial\n"), "F.action")
	if err != nil {
		t.Fatal(err)
	}
	if a.Goal.Name != "Fibonacci_Goal" || a.Feedback.Fields[0].Name != "partial" || a.Feedback.Fields[0].Line != 5 {
		t.Errorf("%+v", a.Feedback)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"int32", "x.msg:1: \"int32\": want"},
		{"\n\nfoo/Bar/Baz/Q x", "x.msg:3: type"},
		{"int32 Bad", "invalid field name"},
		{"int32 a\nint32 a", "x.msg:2: duplicate field a"},
		{"uint8 X=256", "x.msg:1: constant X: \"256\": want an integer in [0, 255]"},
		{"int8 x -129", "want an integer in [-128, 127]"},
		{"int32[0] x", "must be an integer > 0"},
		{"int32[3] x [1,2]", "exactly 3 elements"},
		{"int32[<=1] x [1,2]", "at most 1 elements"},
		{"string<=2 s \"abc\"", "longer than the bound 2"},
		{"Foo x 1", "default values are only allowed"},
		{"float32 F=1e39", "out of float32 range"},
		{"bool b maybe", "a bool must be"},
		{"int32[] X=1", "not a primitive"},
		{"int32 x_ ", "invalid field name"},
		{"in-t32 x", "unknown type"},
		{"string s \"a\"b\"", "inner quotes"},
		{"@optional int32 x", "annotation"},
		{"int32 lower=1", "invalid constant name"},
	} {
		_, err := ParseMessage("pkg", "X", []byte(c.src), "x.msg")
		var pe *Error
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.src, err, c.want)
		}
	}
	if _, err := ParseService("p", "S", []byte("int32 a\n"), "s.srv"); err == nil || !strings.Contains(err.Error(), "2 parts") {
		t.Errorf("srv without separator: %v", err)
	}
	if _, err := ParseAction("p", "A", []byte("---\nint32 a\nbool\n---\n"), "a.action"); err == nil || !strings.HasPrefix(err.Error(), "a.action:3:") {
		t.Errorf("action line number: %v", err)
	}
}

// TestDebianTestInterfaceFiles parses every file of Debian's
// ros2-test-interface-files package when it is installed.
func TestDebianTestInterfaceFiles(t *testing.T) {
	root := "/usr/share/test_interface_files"
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.*"))
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(f) {
		case ".msg":
			_, err = ParseMessage("test_interface_files", "", src, f)
		case ".srv":
			_, err = ParseService("test_interface_files", "", src, f)
		case ".action":
			_, err = ParseAction("test_interface_files", "", src, f)
		default:
			continue
		}
		n++
		if err != nil {
			t.Error(err)
		}
	}
	if n == 0 {
		t.Skip("ros2-test-interface-files is not installed")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"int32 a\n", "# c\nstring<=3[<=2] s [\"a\", 'b']\n---\nfloat64 X=1.5\n",
		"pkg/Type[3] t\n---\nbool b true\n---\nuint8[] d [1,2]\n", "wstring w \"x\"\nchar C=1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := ParseMessage("pkg", "Msg", src, "f.msg")
		if err == nil {
			for _, fl := range m.Fields {
				if _, err := ParseType(fl.Type.String(), "pkg"); err != nil {
					t.Fatalf("type %q does not reparse: %v", fl.Type, err)
				}
			}
		} else if !errors.As(err, new(*Error)) {
			t.Fatalf("error of type %T: %v", err, err)
		}
		ParseService("pkg", "Srv", src, "f.srv")
		ParseAction("pkg", "Act", src, "f.action")
	})
}
