// Package preadd defines the preadd mutation.
//
// preadd: pre-add the loop-invariant part of an index to its pointer, once, before the loop
//
// For each loop, it looks at the subscripts (`qs4[sg * 8 + kk * 2 + k]`)
// and pointer arithmetic (`kq + row * 32 + sg * 8`) inside it whose index
// is a sum of terms of which some are loop-invariant (they read only
// variables the loop never writes and whose address the function never
// takes, constants, and fields of constant reference parameters) and some
// are not. Accesses of one pointer (or array, or array row with invariant
// subscripts) with the same invariant terms form a site: a pointer
// declared once just before the loop as the pointer plus those terms, with
// the pointer's exact address space, constness and element type
// (`threadgroup float4* const qs4_sg_kk = qs4 + sg * 8 + kk * 2;`), and
// every access indexing it with what is left (`qs4_sg_kk[k]`). Once the
// loop is unrolled its addresses are constant offsets from that pointer.
// A loop nested in another gets a site per loop level at which the terms
// are invariant, so the pointer can go as far out as they allow.
//
// Integer arithmetic must not change: each term keeps its own type, and a
// subscript is split only when every term's type (after promotion) is the
// type the whole subscript is computed in, or when the invariant part or
// the rest is a single term whose value converts to that type unchanged
// (a uint term of a size_t index, say). Subtraction is split only in
// signed arithmetic, where overflow is undefined; an unsigned sum is
// assumed not to wrap (a wrapped index would lie outside any buffer of
// fewer than 2^32 elements). Pointer arithmetic adds each term to the
// pointer separately, so its terms can be regrouped freely.
//
// A macro in a subscript (`#define K_TILE 128u`, then `a[i + K_TILE]`) is
// typed by its expansion where it is used, which must be an integer
// constant expression of literals (suffixes included), parentheses,
// arithmetic and other such macros; every macro it reaches must have one
// replacement text in the file and its headers, so that an #if the front
// end cannot decide does not change the type. A macro that expands to a
// floating-point value, a variable or a call, or that is defined twice
// differently, is refused with a reason.
//
// A base that is a row of a two-dimensional (or deeper) array, sp[sg], is
// formed before the loop on every path that reaches it, where the loop
// formed it only where the access is evaluated; a row subscript out of the
// array's bounds is undefined behaviour even when nothing reads through
// it (the checking mode reports a bad access). So a row is pre-added only
// when its subscripts are constants within the bounds (or an and with
// one, sg & 1), or when the loop certainly runs (a do loop, a counted loop
// with iterations) and evaluates the access on every iteration: not under
// an if or a switch, a ?: or the right of && or ||, nor in an inner loop
// that may not run.
//
// It refuses, with a reason, accesses whose base is not a pointer or array
// (a vector's component), bases or terms that change in the loop,
// subscripts whose types would change, rows formed where the loop may not
// form them, and loops that are not statements of a block first on their
// line.
package preadd
