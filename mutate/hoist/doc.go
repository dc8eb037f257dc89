// Package hoist defines the hoist mutation.
//
// hoist: move loop-invariant loads, pointers and scales to just before the loop
//
// For each loop whose body is a block it reports a site when something in
// the body computes the same value on every iteration:
//
//   - a declaration directly in the body (`device const char4* kr = kq +
//     row * 32;`, `float ks = float(kst[b][c][sg]);`) whose initialiser
//     reads only variables the loop never writes (and whose address the
//     function never takes), calls only pure library functions, and whose
//     variable the loop never assigns. It moves to just before the loop as
//     a const local (`const float ks`, `device const char4* const kr`),
//     with the comment lines above it; a declaration that reads an earlier
//     one moves with it in the all choice.
//   - a load from constant, device or threadgroup memory with
//     loop-invariant subscripts (`p.KVH`, `scale[g]`): it is read once into
//     a new const local before the loop, named after it (p_KVH), and every
//     occurrence in the loop reads the local.
//
// Memory is judged per address space. Constant memory cannot change. A
// device load must be from a `device const` pointer, and nothing in the
// function may write device memory through a pointer that could alias it
// (the same scalar type, a char type, or anything the facts cannot model,
// such as calls of the file's functions). A threadgroup load needs a loop
// without barriers that writes no aliasing threadgroup memory: without a
// barrier, another thread's write during the loop would be a race. Every
// load must run on every iteration (a statement of the body itself, before
// any break, continue or return, not under ?:, && or ||), and either the
// loop runs at least once (a do loop or a counted loop) or the load cannot
// fault (a field of a constant reference parameter); the site says which.
// A hoisted name must not clash with a declaration or use of that name
// after the loop in the enclosing block.
//
// The site's choices are all (every candidate, dependent declarations in
// order) and one per candidate, named after it. The loop must be a
// statement of a block, first on its line. Places looked at and refused
// are skipped with the reason.
package hoist
