package main

import (
	"bytes"
	"testing"

	"github.com/nros-go/nros"
	"github.com/nros-go/nros/msg"
	"github.com/nros-go/nros/msg/nros_bench"
)

func TestStamp(t *testing.T) {
	le := msg.Marshal(&nros_bench.Payload{StampNs: -9, Data: []byte{1, 2}}, true, nil)
	le2 := msg.Marshal(&nros_bench.Payload{StampNs: 1234567890123}, true, nil)
	be := append([]byte{0, 0, 0, 0}, 0, 0, 0, 0, 0, 0, 0x30, 0x39) // CDR_BE, 12345
	for _, tc := range []struct {
		name string
		b    []byte
		want int64
		ok   bool
	}{
		{"quit", le, -9, true},
		{"stamp", le2, 1234567890123, true},
		{"big endian", be, 12345, true},
		{"short", le[:11], 0, false},
		{"empty", nil, 0, false},
	} {
		got, ok := stamp(tc.b)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: stamp = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{{"ping"}, {"--depth", "-1"}, {"--timeout", "0"}, {"--nope"}} {
		var errb bytes.Buffer
		if code := run(t.Context(), nros.NewContext(), args, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, errb.String())
		}
	}
}
