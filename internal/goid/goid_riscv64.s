// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// g is X27.
TEXT ·Current(SB), NOSPLIT, $0-8
	MOV	g, X10
	MOV	X10, ret+0(FP)
	RET
