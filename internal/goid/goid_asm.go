//go:build amd64 || 386 || arm64 || arm || riscv64 || ppc64 || ppc64le || s390x || mips || mipsle || mips64 || mips64le || loong64

package goid

// Current returns the identity of the calling goroutine: the address of its
// runtime descriptor, never 0. See the package documentation for when two
// values may be compared.
//
// Implemented in goid_$GOARCH.s.
func Current() uintptr
