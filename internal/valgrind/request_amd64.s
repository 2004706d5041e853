#include "textflag.h"

// func request(args *[6]uintptr, def uintptr) uintptr
TEXT ·request(SB), NOSPLIT, $0-24
	MOVQ args+0(FP), AX
	MOVQ def+8(FP), DX
	// rolq $3,%rdi; rolq $13,%rdi; rolq $61,%rdi; rolq $51,%rdi
	BYTE $0x48; BYTE $0xc1; BYTE $0xc7; BYTE $0x03
	BYTE $0x48; BYTE $0xc1; BYTE $0xc7; BYTE $0x0d
	BYTE $0x48; BYTE $0xc1; BYTE $0xc7; BYTE $0x3d
	BYTE $0x48; BYTE $0xc1; BYTE $0xc7; BYTE $0x33
	// xchgq %rbx,%rbx: %rdx = request(%rax)
	BYTE $0x48; BYTE $0x87; BYTE $0xdb
	MOVQ DX, ret+16(FP)
	RET
