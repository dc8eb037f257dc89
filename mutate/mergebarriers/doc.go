// Package mergebarriers defines the merge-barriers mutation.
//
// merge-barriers: make two adjacent barriers one
//
// Two barrier statements of one block with nothing but comments and blank
// lines between them synchronise exactly as one barrier does: every thread
// reaches both with no access in between. For each such pair it reports a
// site at the second with one choice, merge: when both are the same
// function with the same memory flags the second is removed; when their
// flags differ, the first gets the union of both (mem_flags::mem_device |
// mem_flags::mem_threadgroup) and the second is removed. A simdgroup
// barrier next to a threadgroup barrier with the same flags is removed, as
// the threadgroup barrier orders the whole threadgroup. Barriers behind
// macros are skipped with a reason.
package mergebarriers
