// fiber_arm64.S — context switch for arm64 (AAPCS64).
//
// void mtl_fiber_switch(void** save_sp, void* load_sp)
// Saves x19-x29, lr (x30), d8-d15 and FPCR in a 176-byte frame on the
// current stack, stores sp in *save_sp, switches to load_sp and restores the
// same set from there. A fresh stack is laid out by fiber.cpp so that the
// final ret lands in mtl_fiber_start with x19 = argument and x20 = entry.
#if defined(__aarch64__) && !defined(MTL_FIBER_PORTABLE)

#if defined(__APPLE__)
#define SYM(x) _##x
#else
#define SYM(x) x
#endif

	.text
	.globl SYM(mtl_fiber_switch)
	.globl SYM(mtl_fiber_start)
	.p2align 4
SYM(mtl_fiber_switch):
	sub sp, sp, #176
	stp x19, x20, [sp, #0]
	stp x21, x22, [sp, #16]
	stp x23, x24, [sp, #32]
	stp x25, x26, [sp, #48]
	stp x27, x28, [sp, #64]
	stp x29, x30, [sp, #80]
	stp d8, d9, [sp, #96]
	stp d10, d11, [sp, #112]
	stp d12, d13, [sp, #128]
	stp d14, d15, [sp, #144]
	mrs x9, fpcr
	str x9, [sp, #160]
	mov x9, sp
	str x9, [x0]
	mov sp, x1
	ldr x9, [sp, #160]
	msr fpcr, x9
	ldp x19, x20, [sp, #0]
	ldp x21, x22, [sp, #16]
	ldp x23, x24, [sp, #32]
	ldp x25, x26, [sp, #48]
	ldp x27, x28, [sp, #64]
	ldp x29, x30, [sp, #80]
	ldp d8, d9, [sp, #96]
	ldp d10, d11, [sp, #112]
	ldp d12, d13, [sp, #128]
	ldp d14, d15, [sp, #144]
	add sp, sp, #176
	ret

	.p2align 4
SYM(mtl_fiber_start):
	mov x0, x19
	blr x20
	brk #0

#endif

#if defined(__linux__) && defined(__ELF__)
	.section .note.GNU-stack,"",%progbits
#endif
