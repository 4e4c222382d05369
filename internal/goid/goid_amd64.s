// The calling goroutine's g (see goid.go): a NOSPLIT leaf without a frame.

#include "textflag.h"

// The assembler rewrites (TLS) for the target OS (one instruction on Linux,
// the runtime's TLS slot on Windows and Plan 9).
TEXT ·Current(SB), NOSPLIT, $0-8
	MOVQ	(TLS), AX
	MOVQ	AX, ret+0(FP)
	RET
