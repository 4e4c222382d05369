//go:build mips || mipsle

// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// g is R30.
TEXT ·Current(SB), NOSPLIT, $0-4
	MOVW	g, R1
	MOVW	R1, ret+0(FP)
	RET
