// Package unrollpragma defines the unroll-pragma mutation.
//
// unroll-pragma: put a clang loop unroll pragma before a for loop
//
// For each for loop of the function it reports a site whose choices insert,
// on their own line just before the loop and indented like it, one of
// `#pragma clang loop unroll(full)` (choice full), `#pragma clang loop
// unroll_count(N)` (choices countN: count2, count4 and count8 where they
// do not exceed the loop's trip count, and every other divisor of the trip
// count up to 16 below the count itself, such as count3 and count6 for 12
// iterations, when the header gives a constant trip count; otherwise count2
// and count4) and `#pragma clang loop unroll(disable)` (choice disable).
// Trip counts are msl's counted-loop facts (msl.CountLoop). A pragma only changes how the compiler schedules the
// loop, never what it computes. A `for` that follows other code on its line
// (`if (c) for`, `{ for`) is moved to a new line, indented like the line it
// was on, with the pragma on the line between; a pragma is not a statement,
// so `if (c)` keeps the loop as its body.
//
// It skips, with a reason: loops that already carry a loop pragma (unroll,
// nounroll, clang loop, GCC unroll or ivdep; written out, as _Pragma, or
// through a macro; other pragmas such as diagnostics do not count), loops hidden behind a macro, and
// while and do loops.
package unrollpragma
