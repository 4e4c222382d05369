// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// g is R28.
TEXT ·Current(SB), NOSPLIT, $0-8
	MOVD	g, R0
	MOVD	R0, ret+0(FP)
	RET
