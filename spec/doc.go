// Package spec reads kernel specs: YAML files that say everything a harness
// needs to run a Metal compute kernel, so that nobody writes a one-off C++
// parity harness again. A spec names the source and entry points, the
// buffers with their element types, sizes and deterministic input
// generators, parameter structs laid out with Metal rules, defines and
// function-constant values, dispatch geometry, and named sets of cases.
//
// Load or Parse reads a spec; Cases lists the cases of some sets;
// Instantiate turns one case into an Instance with concrete buffer bytes
// and stages ready to run on any backend.Backend; Instance.CheckKernels
// holds the instance to the kernels' own parameters and function
// constants. Input bytes are generated
// in Go from a seed derived from (spec seed, case name, buffer name), so
// every backend sees identical inputs and adding a buffer never changes
// the bytes of another.
//
// # File format
//
// One YAML file per .metal file. Decoding is strict: an unknown key, a bad
// type or a bad expression is an error that points at the YAML line and
// column, e.g.
//
//	kernels/qsa_prompt.yaml:12:5: buffer "q": unknown element type "hlf"
//
// Top-level keys (see testdata/example.yaml for a fully commented example):
//
//	source:     path of the .metal file, relative to the YAML file unless
//	            absolute (required)
//	includes:   a directory or a list of directories, relative to the YAML
//	            file unless absolute, that #include "..." searches after
//	            the including file's directory and the source's (the -I of
//	            the commands); headers are read from nowhere else
//	seed:       integer base seed (default 1)
//	dispatches: dispatches per timing sample, an expression (default 1)
//	vars:       default case variables, name: expression, evaluated in order;
//	            a set or a case may override them
//	let:        derived variables, name: expression, evaluated in order after
//	            the case's variables are bound; cannot be overridden
//	defines:    preprocessor defines for every stage, NAME: value (verbatim text)
//	constants:  function-constant values for every stage,
//	            NAME: {type: bool|int|uint|short|ushort|char|uchar|half|float, value: expr}
//	structs:    struct types, Name: [{name, type, len?, value?}, ...]
//	            (see Structs)
//	buffers:    list of buffers (below)
//	stages:     list of stages (below), run in order in one instance
//	sets:       named case sets, name: {vars?, defines?, constants?, gen?, cases}
//	domains:    the values case variables may take, VAR: {min, max,
//	            multiple_of, values, le, ge} (see Domains)
//	defaults:   {cases: [set, ...]}: the sets to run when none is named;
//	            without it, "quick" when the spec has that set, else every
//	            set (see Spec.DefaultSets). Keep production shapes that take
//	            minutes on the cpu backend out of the defaults.
//	tune:       tunable parameters and the restrictions between them,
//	            {params, restrictions} (see Tunable parameters)
//
// A relative source path resolves against the YAML file's directory, an
// absolute one stands as written; a source that cannot be read is reported
// at the line that names it when the spec is run.
//
// # Expressions
//
// Numbers in a spec (counts, shapes, geometry, generator parameters, struct
// field values, constant values) are expressions in the
// github.com/expr-lang/expr language, compiled once and evaluated with the
// case's variables. A YAML number is an expression too. Besides expr's
// builtins (min, max, abs, ...) these integer helpers exist:
//
//	ceil_div(a, b)  (a + b - 1) / b
//	div(a, b)       floor(a / b)
//	align(a, b)     a rounded up to a multiple of b
//
// YAML splits a flow list at every comma, so an expression with a comma
// inside a flow list must be quoted:
//
//	threadgroups: [NPOOL / 64, "ceil_div(T, 64)", H]   # right
//	threadgroups: [NPOOL / 64, ceil_div(T, 64), H]     # four items: an error
//
// The same holds for flow mappings ({min: "min(a, b)"}); a block list or a
// plain scalar value needs no quotes. Quote also an expression that YAML
// would read as something else: "true", "-1" are fine unquoted, but one
// starting with [, {, *, &, !, | or > is not.
//
// Note that expr's "/" divides as floating point; an expression whose value
// must be an integer (a count, a dimension) is an error if it is not
// integral. Inside a struct field value, the variable i is the element
// index and j the index within an array field (see Structs).
//
// # Buffers
//
//	name:     unique name (stages bind buffers by name)
//	index:    default index, 0..30: the [[buffer(n)]] index, or for a
//	          threadgroup buffer the [[threadgroup(n)]] index. The two are
//	          separate spaces (a buffer and a threadgroup buffer may both
//	          have index 0); within a space an index is unique
//	type:     element type: half, bfloat, float, char (int8), uchar (uint8),
//	          short, ushort, int, uint, long, ulong, bool; vectors such as
//	          half4, float2, int3, packed_float3, packed_half4; or a struct
//	          name from structs:
//	count:    element count, an expression (default 1); at most
//	          MaxBufferSize bytes
//	shape:    optional list of expressions whose product is count; used to
//	          report the coordinates of a differing element
//	role:     input (filled by gen), output (filled with the sentinel,
//	          so bytes a kernel never writes are compared too), inout
//	          (filled by gen, an output of the run), or threadgroup
//	          (host-sized threadgroup memory of count elements; no data).
//	          Buffer.Output reports output and inout; check compares the
//	          final bytes of every device buffer, inputs included.
//	gen:      the input generator (input and inout; see below). A struct
//	          buffer needs no gen: its bytes come from the field values.
//	values:   for a struct buffer, field: expression overrides of the
//	          struct's field values
//	sentinel: hex bytes repeated over an output buffer, default "a5"
//	slack:    host slack, an expression in bytes (default 0): bytes the
//	          host allocates after the count elements, as hosts that round
//	          buffer sizes up do. A kernel may legitimately read them (a
//	          vector load past the end, masked off), so they are bound and
//	          in bounds, and filled like the data, as if the buffer went on:
//	          an input's generator continues its stream (selected-ids slack
//	          is -1 padding), a struct buffer continues its elements (i
//	          counting on), an output continues its sentinel pattern; a
//	          partial last element is cut. The data's own bytes do not
//	          depend on the slack. Slack is compared like the data: a
//	          variant that writes into it where the baseline does not
//	          fails, since on a host the slack may be someone else's
//	          bytes. For a threadgroup buffer, slack adds to the memory
//	          length (Metal rounds it to 16 bytes).
//
// # Structs
//
// A struct type is a list of fields laid out with Metal rules. A field has
// a name, a type (a scalar, a vector or an earlier struct), an optional
// array length len and an optional value; a field without a value, and a
// nested struct field, are zero. A buffer's values: override field values
// by name. A value is one expression for every array element and lane, or
// a list following the field's shape: one entry per element of an array
// field, one per lane of a vector field, and for an array of vectors each
// entry may itself be a list of lanes:
//
//	structs:
//	  Params:
//	    - {name: n, type: uint, value: T}
//	    - {name: w, type: float, len: 3, value: [1, "T / 2", 0.25]}
//	    - {name: off, type: int, len: 4, value: "j * 64"}  # 0, 64, 128, 192
//	    - {name: dir, type: float2, value: [-1, 1]}
//	    - {name: m, type: short2, len: 2, value: [[1, 2], 3]}
//
// In a value, i is the index of the buffer's element and j the index
// within the array field.
//
// # Generators
//
// A generator is a mapping with a kind and its parameters (all expressions):
//
//	{kind: randint, min: -128, max: 127}   uniform integers in [min, max]
//	{kind: uniform, min: -1, max: 1}       uniform reals in [min, max], rounded
//	                                       to the element type, always finite
//	{kind: scale, min: 0.001, max: 0.1}    positive reals, log-uniform in
//	                                       [min, max]; min must be > 0
//	{kind: iota, start: 0, step: 1}        start + i*step
//	{kind: constant, value: 0}             every component the same value
//	{kind: selected-ids, rows: T, pos0: pos0, count: 16, chunk: 64,
//	 cell: 1, selected: "r % 2 == 0"}
//	        one row per query row r (position pos0 + r): count unique, evenly
//	        spaced, causal ids in [0, (pos0+r)/cell] (fewer when fewer exist),
//	        ascending; then -1 padding up to a multiple of chunk. A row
//	        where selected (an expression of r, default true) is false is
//	        all -1. The buffer's count must be rows * align(count, chunk).
//
// Any float generator may add an edge mode:
//
//	edge: signed-zeros   each component is +0 or -0 with probability rate
//	                     (default 1), else the base value
//	edge: cancel         pairs x, -x*(1+eps) so that sums cancel; eps
//	                     defaults to 2^-10
//	edge: nonfinite      NaN, +Inf or -Inf with probability rate (default
//	                     0.01), else the base value
//
// Components of a vector element are generated one by one. Generation
// consumes one stream of random numbers per buffer, seeded from (seed, case
// name, buffer name). The bytes of a (seed, case, buffer) are fixed
// forever: testdata/gen-digests.txtar pins the sha256 of every generator
// and edge mode's output, so a change to any of them fails a test.
//
// # Stages
//
//	entry:        kernel function name or host_name (required)
//	source:       another .metal file for this stage (default: source:)
//	threadgroups: [x, y, z] threadgroups per grid; missing trailing ones are 1
//	threads:      [x, y, z] threads per threadgroup
//	buffers:      names bound at their own index (default: every buffer
//	              with an index); a name may appear once
//	bind:         name: index, or name: [index, ...], binding a buffer in
//	              this stage at these indices in place of its own index:
//	              bind replaces, it does not add (a buffer given index: 0
//	              and bind: {x: 1} is bound at 1 only; write bind: {x: [0,
//	              1]} for both). This is how hosts bind: each dispatch sets
//	              its arguments afresh (ggml passes its args at 0 and the
//	              source at 1 in one kernel, the source at 0 in another), and
//	              a buffer's own index kept beside the stage's could take
//	              a slot the stage gives another buffer. A name only in
//	              bind: is bound even if buffers: does not list it. A host
//	              may bind one buffer at several indices, say a source also
//	              passed as the absent mask; each binding is a copy on the
//	              cpu backend, so CheckKernels refuses one a kernel writes
//	              through
//	includes:     more include directories for this stage, searched after
//	              the spec's
//	defines, constants: per-stage additions and overrides
//
// A threadgroup buffer binds in the [[threadgroup(n)]] space, every other
// buffer in the [[buffer(n)]] space; two buffers in one slot are an error.
// Threadgroups and threads per dimension are at least 1 and at most
// 2^32-1.
//
// # Checking against the kernel
//
// What a spec says about a kernel's arguments cannot be checked from the
// YAML alone; Instance.CheckKernels reads each stage's entry with the
// stage's defines and include directories and refuses, at the spec position at fault and naming
// the kernel's position:
//
//   - a [[buffer(n)]] or [[threadgroup(n)]] parameter nothing is bound to.
//     A device or constant parameter without an attribute takes the next
//     index no [[buffer(n)]] names, in parameter order (the cpu
//     translator's rule). A parameter with [[function_constant(c)]] is
//     absent, and needs nothing, when c is false;
//   - a buffer whose element does not fit the parameter's (ElementFits): a
//     kernel element of bytes (char, uchar, their vectors, void) views
//     anything, and a spec buffer of char or uchar holds anything;
//     otherwise the component scalars must agree (the same floating type;
//     integers of one width, signedness free) and one element size must
//     divide the other (a half4 parameter reads a half buffer; a
//     device const half* on a float buffer, or a packed_float3 parameter
//     on a float3 buffer, is an error); two structs must have one size.
//     A parameter type msl cannot lay out is checked for its binding only;
//   - a reference parameter (constant Params&) larger than its buffer;
//   - a buffer bound at several indices and written through one of them;
//   - a function constant the entry uses (itself, or through the helpers,
//     file-scope constants and macros it names) with no value in the case.
//     Unset, it would silently read as zero. A constant the source guards
//     with is_function_constant_defined(name) anywhere may stay unset;
//   - a constant given a value no stage's source declares (a misspelt
//     name), or a type other than its declaration's.
//
// # Limits
//
// A spec nests at most MaxDepth (32) levels of mappings and lists; a key
// is at most MaxKeyLen (256) bytes, any other value MaxScalarLen (4096);
// an expression at most MaxExprLen (1024) bytes and MaxExprDepth (32)
// nested brackets. Past a limit the error points at the node and quotes at
// most 60 bytes of it; error messages never echo a long value whole.
//
// # Case sets
//
// Each set is a mapping with cases (a list of mappings of variable: value,
// with an optional name; the default name is built from the values) and
// optional overrides that apply to every case of the set: vars, defines,
// constants (a bare value keeps the declared type), and gen (buffer:
// generator keys that replace the buffer's keys, so {q: {edge: cancel}}
// keeps q's kind and range). Set names are free; the qsa specs use quick
// (seconds on the cpu backend), full (production shapes), edge and cancel
// (edge-mode inputs) and fallback (a function constant flipped).
//
// # Domains
//
// A case variable may declare the integers it can take, so that cases
// nobody listed (held-out cases) can be drawn from them:
//
//	domains:
//	  T: {min: 1, max: 4096}                  # any integer in [1, 4096]
//	  D: {min: 32, max: 256, multiple_of: 32}  # 32, 64, ..., 256
//	  H: {values: [1, 2, 4, 8]}                # one of a list
//	  K: {min: 1, max: 64, le: T}              # and at most T
//	  P: {min: 0, max: 32768, draw_max: 4096}  # drawn up to 4096 only
//
// min and max are inclusive (both are needed unless values is given, and
// then they default to the list's ends); multiple_of keeps the multiples
// of a positive integer; values keeps the listed integers; le and ge bound
// the variable by another domain variable declared before it; draw_max
// bounds the values drawn for held-out cases (default max), so that a
// domain can hold a listed production shape while drawn cases stay quick
// to run. Buffers'
// counts, shapes and geometry follow from the variables as for any case.
// Parse refuses, at the domain's line, a domain with no valid value (an
// empty range, no multiple in it, no listed value left), a range wider
// than MaxDomainSpan, a relation to a variable with no earlier domain, and
// a let; and, at the value in the case (or at the domain when a set's or
// the spec's vars give it), a listed case whose variable the domain
// contradicts, and, at the first domain, domains whose largest case (each
// set's first case with every domain variable at its largest valid value)
// has a buffer over MaxBufferSize or threads or a grid past their limits:
//
//	k.yaml:25:13: case quick/N=128: N = 128 contradicts its domain (line 9): 128 is outside [1, 100]
//
// Spec.Draw draws held-out cases with a seed: each takes a listed case's
// set and variables and draws every domain variable in order, log-uniform
// over its range (uniform one time in four) and within its relations,
// avoiding the listed cases' values; each has an input seed of its own
// (Case.Seed). Spec.Shrink gives the cases one step smaller within the
// domains, for shrinking a failing case; Case.Token and ParseToken write
// and read a case as one shell word, set/name@seed/VAR=value,..., so that
// it can be replayed exactly (metalab check --replay). A drawn case that
// does not instantiate (a count past MaxBufferSize) is the caller's to
// skip and count.
//
// # Tunable parameters
//
// The tune: section declares parameters a sweep may vary, as Kernel
// Tuner's tune_params and restrictions do: each takes one of a list of
// integers, and restrictions, conditions over the parameters, say which
// combinations are allowed:
//
//	tune:
//	  params:
//	    NSG: [4, 2, 8]                       # a list; the first is the default
//	    TILE: {min: 16, max: 128, step: 16, default: 64}   # 16, 32, ..., 128
//	    TPW: {min: 32, max: 1024, pow2: true}  # 32, 64, ..., 1024
//	    K: {values: [1, 2, 4], default: 2}
//	  restrictions:
//	    - NSG * 32 <= 256
//	    - TILE % NSG == 0
//
// A parameter is a list of integers (no duplicates), or a mapping with
// values: and an optional default:, or a range: min and max (inclusive)
// with step (default 1) or pow2: true (the powers of two in [min, max]),
// and an optional default:. The default is the list's first value or the
// range's min unless default: names another of the values. The default
// point, every parameter at its default, is the baseline.
//
// A parameter's name is usable wherever a case variable is: in every
// expression (threads, threadgroups, dispatches, buffer counts, shapes
// and slack, generator parameters, struct field values, constant values,
// vars and lets), and in the values of defines:, where each identifier
// that names a parameter is replaced by its value (NSG: NSG passes
// -DNSG=4 at the default; TILE_BYTES: "(TILE*4)" passes (64*4); text in
// quotes is kept). A define whose value is exactly a parameter's name is
// that parameter's define (Spec.DefineParams): a retained change of the
// parameter can be a patch of the source's #define of it. No case, set
// or spec var may set a parameter. A restriction reads parameters only
// and must be true or false.
//
// Parse refuses, at the text at fault: a parameter named like a var, a
// let, a case or domain variable, a helper function or i, j, r; a
// default not among the values; an empty range or list; a duplicate
// value; a parameter nothing reads (no expression and no define value
// names it: every point would run one program); a restriction naming
// anything but a parameter, or one false (or not a condition) at the
// default point; and a grid (the product of the
// value counts, before restrictions) of more than MaxTunePoints points,
// with the count in the message.
//
// Spec.Params lists the parameters; Spec.Points lists every point the
// restrictions allow, the default first and then in grid order (the
// first parameter slowest); Spec.Allowed checks one point; Spec.At
// returns the spec with its parameters fixed at a point, whose Digest
// covers the point (the default point keeps the file's digest) and whose
// instances see the point's values; At refuses a point the restrictions
// forbid or at which the domains' largest case is past a limit. Held-out
// cases are drawn, and case tokens replayed, under the spec's point:
// a token does not carry the point. A point is written NSG=4 TILE=64
// (Point.String, ParsePoint; in JSON it is that one string); a point
// that leaves a parameter out gives it its default (Spec.Complete).
// Spec.ParamUses lists the places a parameter reaches (a define, the
// threads of a stage, a buffer's count), for naming the host-side values
// a parameter change needs; Spec.FileDigest is the file's digest at any
// point.
//
// # Errors
//
// Every error about the spec itself reads file:line:col: msg and points at
// the YAML node at fault: a YAML syntax error, an unknown or duplicate key,
// an unknown element type, role or generator kind, an expression that does
// not compile or reads a variable no case binds, a duplicate buffer index
// or binding, a struct value list of the wrong length, a case that is not
// a number, anything past a limit. Errors that need a case's values (a
// count that is not an integer, a shape whose product is not the count, a
// selected-ids buffer of the wrong size, a negative slack, a dimension
// below 1 or over 2^32-1) are found by Instantiate, and errors that need
// the kernel by CheckKernels; both still point at the spec's line,
// prefixed with the case.
package spec
