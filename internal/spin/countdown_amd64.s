#include "textflag.h"

// func Countdown(n int): MOVQ, TESTQ and JLE, then DECQ and JNZ per step,
// then RET: 2n+4 instructions when n > 0, whatever the compiler does.
TEXT ·Countdown(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), AX
	TESTQ AX, AX
	JLE done
loop:
	DECQ AX
	JNZ loop
done:
	RET
