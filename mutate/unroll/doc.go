// Package unroll defines the unroll mutation.
//
// unroll: unroll a counted for loop by hand, by 2, by 4 or fully
//
// For each for loop whose trip count msl's counted-loop facts know (start,
// bound and step constant; <, <=, >, >= or != against the bound; ++, --,
// += or -= by a constant, or a geometric *=, /=, <<=, >>= for a full
// unroll) it reports a site. Choice full replaces the loop by one block per
// iteration, in iteration order, each holding the body with the induction
// variable replaced by its value as a literal typed like the variable (3u
// for a uint, 3 for an int, (-1) for a negative int, short(3), size_t(3)
// and so on), so every operation sees the value and type it saw in the
// loop and every result stays bitwise identical. Each copy is its own
// block, so declarations in the body do not clash; a loop that is the body
// of an if or another loop without braces gets one more block around the
// copies. Loop pragmas before the loop are removed with it. Choices by2 and
// by4 keep the loop, stepping by 2 or 4 times its step, with that many
// copies of the body in one block, copy k using (i + k*step), typed like
// the variable.
//
// It refuses, with a reason: loops whose trip count is not known (and says
// which part is not a constant), bodies with break or continue that leave
// the loop, return, goto or labels, an induction variable the body writes
// or whose address it takes, a body using a macro that mentions the
// variable, an induction variable declared before the loop and used after
// it (for full), a partial factor that does not divide the trip count
// (offered only when it does), geometric loops for partial factors, while
// and do loops, loops hidden behind macros, and full unrolls of more than
// 64 iterations or 16 KiB of copied text.
package unroll
