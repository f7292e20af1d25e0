#include "textflag.h"
#include "go_asm.h"

// clmemprobe_cl_hotTrampoline is called by runtime.cgocall on the system stack with the System V C
// convention (an assembly symbol without the package's dot is global: hence the long name): DI holds the
// *hotBlock. It passes the block's nine arguments to block.fn (six in registers, three on the stack)
// and stores the integer result in block.ret. It uses only registers the C convention lets a callee
// clobber; the assembler saves BP around the frame, so with the 32-byte frame below the stack is 16-byte
// aligned at the CALL, as the convention requires (asmcgocall aligns it before calling us).
GLOBL ·hotTrampolineABI0(SB), NOPTR|RODATA, $8
DATA ·hotTrampolineABI0(SB)/8, $clmemprobe_cl_hotTrampoline(SB)
TEXT clmemprobe_cl_hotTrampoline(SB), NOSPLIT, $32
	MOVQ DI, 24(SP) // the block, kept across the call
	MOVQ DI, R11
	MOVQ (hotBlock_args+6*8)(R11), R10
	MOVQ R10, 0(SP) // argument 7
	MOVQ (hotBlock_args+7*8)(R11), R10
	MOVQ R10, 8(SP) // argument 8
	MOVQ (hotBlock_args+8*8)(R11), R10
	MOVQ R10, 16(SP) // argument 9
	MOVQ (hotBlock_args+0*8)(R11), DI
	MOVQ (hotBlock_args+1*8)(R11), SI
	MOVQ (hotBlock_args+2*8)(R11), DX
	MOVQ (hotBlock_args+3*8)(R11), CX
	MOVQ (hotBlock_args+4*8)(R11), R8
	MOVQ (hotBlock_args+5*8)(R11), R9
	MOVQ hotBlock_fn(R11), R10
	XORL AX, AX // no vector registers hold arguments (matters only to a variadic callee)
	CALL R10
	MOVQ 24(SP), R11
	MOVQ AX, hotBlock_ret(R11)
	RET
