package ros

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestXXH3Vectors checks every length class (0-16, 17-128, 129-240, one
// block and several) against libxxhash's output.
func TestXXH3Vectors(t *testing.T) {
	f, err := os.Open("testdata/xxh3.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 5000)
	for i := range buf {
		buf[i] = byte((i*31 + 7) ^ (i >> 3))
	}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		var l int
		var wlo, whi string
		fs := strings.Fields(line)
		if len(fs) != 3 {
			t.Fatalf("bad line %q", line)
		}
		l, _ = strconv.Atoi(fs[0])
		wlo, whi = fs[1], fs[2]
		lo, hi := xxh3Hash128(buf[:l])
		if got := hex16(lo) + " " + hex16(hi); got != wlo+" "+whi {
			t.Errorf("len %d: got %s, want %s %s", l, got, wlo, whi)
		}
		n++
	}
	if n < 60 {
		t.Fatalf("only %d vectors", n)
	}
}

func hex16(v uint64) string {
	s := strconv.FormatUint(v, 16)
	return strings.Repeat("0", 16-len(s)) + s
}
