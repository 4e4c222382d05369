//go:build ppc64 || ppc64le

// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// g is R30.
TEXT ·Current(SB), NOSPLIT, $0-8
	MOVD	g, R3
	MOVD	R3, ret+0(FP)
	RET
