// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// g is R22.
TEXT ·Current(SB), NOSPLIT, $0-8
	MOVV	g, R4
	MOVV	R4, ret+0(FP)
	RET
