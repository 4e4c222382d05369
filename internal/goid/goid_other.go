//go:build !(amd64 || 386 || arm64 || arm || riscv64 || ppc64 || ppc64le || s390x || mips || mipsle || mips64 || mips64le || loong64)

package goid

import (
	"bytes"
	"runtime"
	"strconv"
)

// Current returns the identity of the calling goroutine, never 0. See the
// package documentation for when two values may be compared.
//
// This is the fallback for architectures without an assembly file (e.g.
// wasm): it parses the goroutine's id from the first line of runtime.Stack
// ("goroutine 18 [running]:"), about a microsecond per call.
func Current() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b, ok := bytes.CutPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); ok && i > 0 {
		if id, err := strconv.ParseUint(string(b[:i]), 10, 64); err == nil && id != 0 {
			return uintptr(id)
		}
	}
	panic("goid: cannot read the goroutine id from " + strconv.Quote(string(buf[:])))
}
