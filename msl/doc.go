// Package msl is metalab's front end for the Metal Shading Language: a
// lexer, a structural parser, a constant evaluator and a static
// threadgroup-memory estimate. It models exactly what source-to-source
// mutation and translation to C++ need and keeps everything else as opaque
// byte ranges, so edits can be expressed as byte ranges of the original
// text.
//
// # Tokens
//
// [Lex] splits a file into [Token]s with byte offsets: identifiers and
// keywords, numeric literals with Metal suffixes (1.0h, 2.f, 0x1Fu, 0b101,
// 1'000), string and character literals, every C++ operator (longest match),
// comments, whole preprocessor lines (backslash continuations included) as
// one Directive token, and [[...]] attribute lists as one Attribute token.
// Whitespace is trivia: the tokens and the gaps between them reproduce the
// file byte for byte.
//
// The lexer follows #if/#elif/#else/#endif. A branch whose condition is
// certainly false, given integer literals and the object-like macros seen so
// far (evaluated as the preprocessor does, in intmax_t, or uintmax_t where an
// operand is unsigned: -1 > 0u), becomes one Skipped token and is not lexed (it may hold prose). A
// branch whose condition is unknown (it depends on -D defines, say) is lexed
// leniently: stray bytes there are tokens, not errors. #define and #undef
// are tracked in source order: after a certain #undef a name is not
// defined (and 0 in #if) until defined again. A name the file never
// defines and no -D gives stays unknown, as it may come from a header or
// the host; [ParseOptions] can declare it undefined (-U).
//
// # Structure
//
// [Parse] builds a [File]: functions (kernels, helpers, templates, struct
// members, declarations, explicit specialisations with their
// [Func.SpecArgs]), template parameters with their defaults, their
// parameters with address space, type, name and attributes, explicit
// instantiations with their host_name, #defines, structs, enums, typedefs
// and file-scope constants. A function-like or object-like macro used at
// file scope whose expansion holds explicit instantiations (MLX's
// instantiate_kernel, say) is expanded, with # stringising, ## pasting,
// __VA_ARGS__ and nested macros to a bounded depth and size, and its
// instantiations are recorded with the use's span. Function bodies become
// statement trees of [Block], [For], [While], [Do], [If], [Switch], [Decl],
// [Barrier], [MacroUse] and [ExprStmt]. Pragmas before a loop (#pragma,
// _Pragma, or a macro that expands to one) are recorded on the loop.
// [Walk] visits nested statements; [File.Callees] finds the file's
// functions a function calls.
//
// Malformed input yields a best-effort File and an [ErrorList] of errors
// printed file:line:col: msg. A syntax problem in a body is reported and the
// rest of the enclosing block is kept as one opaque statement. Brackets or
// statements nested more than 256 deep are an error (clang's default
// bracket depth bounds what the Metal compiler accepts), so a pathological
// file cannot exhaust the stack. Parse never panics on any input.
//
// # Constant evaluation
//
// [Env.Eval] evaluates integer constant expressions over literals,
// object-like macros (command-line defines first), constexpr, constant and
// const variables (file scope and the function's locals before [Env.At]),
// enumerators, sizeof and bound template parameters. Anything else is
// reported as unknown; the evaluator never guesses. [Env.Layout] gives the
// size and alignment of Metal types: scalars, vectors (a 3-vector is laid
// out like a 4-vector), packed vectors, matrices, atomics, arrays, typedefs
// and the file's structs.
//
// # Loop facts
//
// The facts mutations consult live here, so that operators only decide and
// edit. [File.ParseExpr] turns a statement's byte range into an [Expr] tree
// whose nodes keep their offsets. [ScopeOf] resolves the names of a
// function body to [Var]s with their address spaces, element types and
// constness, and memoises what follows for that function: [Scope.TypeOf]
// infers integer and vector types; [Scope.Effects] says what statements
// read and write — variables (def/use), memory by address space
// ([Access]), barriers, calls, jumps — and what it cannot model;
// [Scope.CountLoop] gives a counted loop's trip count and iteration values
// (bounds and step from the constant evaluator); [Scope.LoopFacts],
// [Scope.Invariant], [Scope.ExprInvariant] and [Scope.OnEveryIteration]
// say what a loop leaves unchanged and which statements run on every
// iteration; [Scope.MayAlias] judges type-based aliasing. For barrier work,
// [Intervals] splits a block at its barriers and
// [Scope.ThreadFootprints] interprets a statement range for each of the
// 1024 threads of the largest threadgroup (lane, SIMD group and index
// known; constants and counted-loop counters followed; loads unknown), once
// per value of the bool function constants the function tests, recording
// which element each thread reads and writes; [Conflicts] finds two threads
// touching one element, one of them writing.
//
// # Threadgroup memory
//
// [ThreadgroupMemory] lists the threadgroup variables a kernel declares in
// its body and in the helpers it calls, sizes them with [Env.Layout] and
// [Env.Eval], places them in source order at their alignment and rounds the
// total up to 16 bytes, the figure compared against the 16 KiB limit.
// Parameters with [[threadgroup(n)]] are listed separately: the host sizes
// them. A kernel may be named by its host_name, in which case the
// instantiation's template arguments are bound, and defaulted template
// parameters it leaves out take their defaults (unless a function
// parameter's type names them, so that deduction could decide them). Pointer and reference
// declarators (`threadgroup float a[4], *p;`) allocate nothing and are left
// out; each declaration's dimensions are kept, evaluated where possible, for
// display as float[4][64].
package msl
