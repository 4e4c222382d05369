// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// The assembler rewrites (TLS) for the target OS.
TEXT ·Current(SB), NOSPLIT, $0-4
	MOVL	(TLS), AX
	MOVL	AX, ret+0(FP)
	RET
