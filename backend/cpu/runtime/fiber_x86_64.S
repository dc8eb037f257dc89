// fiber_x86_64.S — context switch for x86-64 (System V ABI).
//
// void mtl_fiber_switch(void** save_sp, void* load_sp)
// Saves rbp, rbx, r12-r15, the MXCSR and the x87 control word on the
// current stack, stores rsp in *save_sp, switches to load_sp and restores
// the same set from there (the FP control state only when it differs). A fresh stack is laid out by fiber.cpp so that the
// final ret lands in mtl_fiber_start with r12 = argument and r13 = entry.
#if defined(__x86_64__) && !defined(MTL_FIBER_PORTABLE)

#if defined(__APPLE__)
#define SYM(x) _##x
#else
#define SYM(x) x
#endif

	.text
	.globl SYM(mtl_fiber_switch)
	.globl SYM(mtl_fiber_start)
#if !defined(__APPLE__)
	.type mtl_fiber_switch, @function
	.type mtl_fiber_start, @function
#endif
	.p2align 4
SYM(mtl_fiber_switch):
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	subq $8, %rsp
	stmxcsr (%rsp)
	fnstcw 4(%rsp)
	movl (%rsp), %eax
	movzwl 4(%rsp), %ecx
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	// Loading MXCSR and the x87 control word is slow; skip it when the
	// resumed fiber's saved modes are the ones already in force.
	cmpl (%rsp), %eax
	jne 1f
	cmpw 4(%rsp), %cx
	je 2f
1:
	ldmxcsr (%rsp)
	fldcw 4(%rsp)
2:
	addq $8, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
#if !defined(__APPLE__)
	.size mtl_fiber_switch, .-mtl_fiber_switch
#endif

	.p2align 4
SYM(mtl_fiber_start):
	movq %r12, %rdi
	callq *%r13
	ud2
#if !defined(__APPLE__)
	.size mtl_fiber_start, .-mtl_fiber_start
#endif

#endif

#if defined(__linux__) && defined(__ELF__)
	.section .note.GNU-stack,"",%progbits
#endif
