// Package splitpartials defines the split-partials mutation.
//
// split-partials: give each round of a reused threadgroup buffer its own copy
//
// A threadgroup array reused across rounds — written, barrier, read,
// barrier, written again, barrier, read — needs the barrier between a
// round's reads and the next round's writes only because the rounds share
// storage. For each threadgroup array declared in the function whose
// element accesses all lie in one block, it splits the block at its
// barriers into intervals, finds the rounds (a round starts with writes
// and ends before the next writes that follow its reads), and reports a
// site when there are at least two. Choice decl-K gives rounds 2 to K their
// own new declarations (sp_2, sp_3, ...) inserted after the buffer's;
// choice dim-K makes the first dimension K times larger and moves round j
// to rows (j-1)*d0 onwards. Only the buffer's name or first subscript
// changes: the arithmetic that combines partials, and its order, stay
// exactly as written. The site reports the threadgroup bytes each copy
// adds.
//
// A pointer into the buffer (`threadgroup float* P = sp[1];`) used for
// another purpose later is an alias: its accesses must form rounds of
// their own after the buffer's rounds, they keep pointing into the
// original buffer (their lifetime is unchanged) and the barrier before
// them stays. The split is exact when every round reads only elements it
// has itself written in an earlier interval, which msl's thread footprints
// check for every thread and every value of the bool function constants,
// for threadgroup sizes of 32 to 1024 threads (multiples of the SIMD
// width); the site says for which sizes it holds (a round written by SIMD
// groups 2 and 3 needs at least 128 threads).
//
// Once split, the barrier that only protected reuse orders nothing:
// elide-barrier removes it, cross-barrier moves a round's stores next to
// the previous round's so they meet at one barrier, and merge-barriers
// joins barriers left adjacent.
//
// It refuses, with a reason: buffers whose address escapes (passed to a
// function, stored in a pointer that is reassigned), accesses in more than
// one block, intervals that read one round and write the next, reads before
// any write, direct accesses after the alias's, reads of elements the round
// did not write, and anything the thread footprints cannot follow.
package splitpartials
