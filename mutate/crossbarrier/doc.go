// Package crossbarrier defines the cross-barrier mutation.
//
// cross-barrier: move a statement to the other side of a neighbouring barrier
//
// For each statement of a block between two of its threadgroup barriers it
// reports a site whose choices move the statement, with the comment lines
// directly above it, across the nearest barrier of its block: up (to just
// before the barrier above it, jumping the statements between) or down (to
// just after the barrier below it). A move is offered only when it keeps
// what the kernel computes:
//
//   - the statement and the statements it jumps do not depend on each
//     other: neither reads a variable the other writes, neither writes
//     memory the other touches, the jumped statements do not name a
//     variable the statement declares;
//   - the statement reads nothing the barrier protects: on its new side,
//     no element it touches is touched by another thread in the interval it
//     joins, with a write on either side (msl's thread footprints, over
//     every thread of a threadgroup of up to 1024 threads and every value of
//     the bool function constants);
//   - it holds no barrier, no break, continue, return or goto, and nothing
//     the facts cannot follow.
//
// When the interval it joins reaches the start or end of a branch of an
// if statement, it goes on before or after the if, as elide-barrier's
// intervals do (every thread takes a branch that holds a barrier); the
// site states the assumption.
//
// Moving a statement lets rounds whose stores are disjoint meet at one
// barrier, after which merge-barriers and elide-barrier can remove the
// barriers that no longer order anything. Refusals are skipped with the
// reason.
package crossbarrier
