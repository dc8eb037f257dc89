// Package dropbarrier defines the drop-barrier mutation.
//
// drop-barrier: remove a threadgroup or simdgroup barrier
//
// For each threadgroup_barrier or simdgroup_barrier statement of the
// function it reports a site with one choice, drop, that removes the
// statement: the whole line, a trailing // comment included, when the
// barrier is alone on its line (so no blank line is left), otherwise just
// the statement and the spaces that separate it from its neighbours. A
// barrier that is the whole body of an if, for, while or do, or that
// follows a label or case, is replaced by an empty statement `;` so the
// control flow around it keeps its shape and the label still labels a
// statement.
//
// Dropping a barrier can change what a kernel computes; check's parity and
// race probe decide whether a variant keeps it. Barriers hidden behind a
// macro are skipped with a reason.
package dropbarrier
