// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// g is R13.
TEXT ·Current(SB), NOSPLIT, $0-8
	MOVD	g, R2
	MOVD	R2, ret+0(FP)
	RET
