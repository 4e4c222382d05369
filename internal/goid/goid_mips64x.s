//go:build mips64 || mips64le

// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// g is R30.
TEXT ·Current(SB), NOSPLIT, $0-8
	MOVV	g, R1
	MOVV	R1, ret+0(FP)
	RET
