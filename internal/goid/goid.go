// Package goid tells goroutines apart: Current returns a value that
// identifies the calling goroutine for as long as it runs.
//
// Go deliberately has no goroutine identity, and nros-go needs one only to
// answer "is the caller the goroutine that is running this callback (or
// pass, or transaction)?" so that a Close or a nested call from inside a
// callback does not wait for itself. Those places used to read the
// goroutine's stack (runtime.Stack or runtime.Callers), which costs a
// microsecond or more and, for the executor, 64 KiB per call.
//
// On the architectures with an assembly file here (amd64, 386, arm64, arm,
// riscv64, ppc64/ppc64le, s390x, mips*, loong64) Current returns the address
// of the runtime's per-goroutine descriptor (the g), read from the g register
// or thread-local slot in a few instructions, without allocating. The runtime
// reuses a g after its goroutine exits, so a value is an identity only
// while its goroutine is alive: compare the caller's Current with a value
// that its owner stored when it started the work in question and clears
// (or replaces) before that work ends, e.g. in a deferred call. Then an
// equal value can only be the caller's own, because a goroutine that reuses
// a g starts after the previous owner's clear. Descriptors are never freed,
// so holding one as a uintptr keeps nothing alive and dangles never.
//
// On other architectures (goid_other.go) Current returns the goroutine's
// id parsed from runtime.Stack instead: slower (about a microsecond), but
// the same contract (ids are never reused, which is stricter).
package goid
