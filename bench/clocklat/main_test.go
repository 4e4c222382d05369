package main

import (
	"bytes"
	"testing"

	"github.com/nros-go/nros"
)

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	err := write(&b, []record{{wall: 5, sim: 1_010_000_000}, {wall: 6, sim: -1}, {wall: 7, sim: 0}})
	if err != nil {
		t.Fatal(err)
	}
	// ROS style: sec may be negative, nanosec in [0, 1e9), as clockpub prints.
	want := "5 1 10000000\n6 -1 999999999\n7 0 0\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"--count", "0"}, {"--period", "0s"}, {"--timeout", "-1"}} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), nros.NewContext(), args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}

func TestTrimRosArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"--ros-args", "-p", "a:=1"}, []string{"-p", "a:=1"}},
		{[]string{"-p", "a:=1"}, []string{"-p", "a:=1"}},
	} {
		got := trimRosArgs(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("trimRosArgs(%q) = %q, want %q", tc.in, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("trimRosArgs(%q) = %q, want %q", tc.in, got, tc.want)
			}
		}
	}
}
