// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// g is R10.
TEXT ·Current(SB), NOSPLIT, $0-4
	MOVW	g, R0
	MOVW	R0, ret+0(FP)
	RET
