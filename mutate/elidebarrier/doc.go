// Package elidebarrier defines the elide-barrier mutation.
//
// elide-barrier: remove a threadgroup barrier that provably orders nothing
//
// For each threadgroup_barrier statement of a block it evaluates the
// statements between it and the block's barrier before (the interval
// before) and between it and the barrier after (the interval after) for
// every thread of a threadgroup of up to 1024 threads, and for every value
// of the bool function constants they test: each thread's SIMD lane, SIMD
// group and index are known, and so are constants, counters of counted
// loops and what is computed from them (msl's thread footprints). When no
// element of threadgroup or device memory is touched by one thread in one
// interval and by another thread in the other, with at least one of them
// writing, the barrier only separates accesses of the same thread, which
// program order already keeps, and the choice elide removes it (as
// drop-barrier does). The site says what the proof assumed (for example
// one-dimensional threadgroups, when thread_position_in_threadgroup is
// used as the thread's index).
//
// A barrier in the branch of an if statement (ggml's `if (ntg >
// N_SIMDWIDTH) { ... }`) is judged with the code around the if: every
// thread takes a branch that holds a barrier, as Metal requires of a
// barrier, so an interval that reaches the branch's start goes on before
// the if, back to the barrier there (or the kernel's start), and one that
// reaches its end goes on after the if; the site states the assumption.
// The if's condition must touch no memory and have no effects. Function-
// like macros that compute a value from their arguments (ggml's MAX) are
// followed as pure expressions.
//
// It refuses, with the reason (the first conflicting pair of accesses, or
// what could not be followed: a load used as an index, a call of one of the
// file's functions, an unknown loop count): barriers whose interval before
// or after reaches outside a loop body (the first barrier of a loop body,
// say, whose interval before includes the previous iteration) or another
// statement, simdgroup barriers, and barriers hidden behind macros.
package elidebarrier
