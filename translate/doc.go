// Package translate turns a Metal Shading Language source into the
// translation unit a backend compiles, for one entry point: C++ for the
// cpu backend (package translate/cpp), CUDA for the cuda backend (package
// translate/cuda). It is the one translator of the project: it works on
// msl's parse tree, and what differs between backends is a [Target].
//
// # Pipeline
//
// [Translate] runs, for a backend.Source:
//
//  1. [Vet], on the raw source and every file it includes: it refuses
//     what a Metal kernel cannot contain and what would let an untrusted
//     variant reach the host (see vet.go), and records the include
//     closure (the files read, with their contents). A call of a
//     function nobody declares, in the source itself, refuses it only when
//     the translation keeps the call: another kernel may call a Metal
//     function the prelude lacks without stopping the entry.
//  2. The C++ compiler's own preprocessor ([Preprocessor], `CXX -E`), so
//     that the program is the source as Metal's compiler would see it:
//     includes read, macros expanded (kernels written in #define bodies,
//     instantiations written by macros), #if decided by the defines.
//  3. msl parses the preprocessed text.
//  4. What the entry point reaches is kept (see below), everything is
//     rewritten for the target, and the target adds what makes the entry
//     callable.
//
// # Preprocessing
//
// The preprocessor runs as `CXX -E -x c++ -std=c++17 -undef -nostdinc`
// over the source on standard input. Quoted includes are searched in the
// including file's directory, then src.Dir, then src.IncludeDirs (the
// spec's includes:, the commands' -I), the order the vetting pass
// resolves them in (-iquote); <...> includes find only Metal's own headers
// (metal_stdlib, metal_*, simd/simd.h), as empty files in a stub
// directory, so the target's prelude, included once at the top, is never
// expanded into the translation and a header of the user's is never read
// through <...>. The compiler's own predefined macros are off (-undef: no
// __GNUC__ or __x86_64__, the same text on every host); [Predefined] sets
// what Metal's compiler defines and kernels test: __METAL_VERSION__ 310,
// __METAL_MACOS__ and __HAVE_BFLOAT__ (__cplusplus is 201703L, as the
// vetting pass assumes). src.Defines follow. A source the preprocessor
// rejects (#error, a header not found) is a [*PreprocessError] whose
// messages name the .metal files.
//
// The preprocessed text carries line markers. They are blanked, and each
// line keeps the file and line it came from ([Preprocessed.Origin]): the
// main file by src.Name, a header by its path under the directory it was
// found through, as that directory was given. The translation writes
// #line directives from them (a few lines ahead with newlines instead),
// so compiler errors and the checking mode's reports (through the debug
// line tables) name .metal lines: of the kernel or of the header the code
// is in. Code expanded from a macro is on the line of the macro's use;
// barriers within one such line share a line, which the cpu runner's
// deadlock report then cannot tell apart.
//
// A Preprocessor keeps its recent results, keyed by the compiler, its
// arguments, the text and the contents of the include closure, so a
// source compiled in the plain and the checking mode is preprocessed once.
// The compile cache of a backend keys on the translation unit, which holds
// everything the includes and defines contributed.
//
// # What is kept
//
// Only what the entry point reaches is translated, so a kernel the
// target cannot translate elsewhere in a large file does not stop the
// others, and compiles stay small. Types, constants, structs (with their
// member functions) and typedefs are always kept. A free function is kept
// whole when the entry or anything kept whole names it (a call, a
// function-pointer template argument such as ggml's kernel_binary<op_add>),
// transitively; it is kept as a declaration only when only a declaration
// names it (typedef decltype(kernel_soft_max<float>) k_t, as ggml writes
// for every kernel). Names are matched as identifiers, overloads and
// specialisations together: an over-approximation of the call graph,
// never less. Every other function, other kernels included, is left out,
// and so is every explicit instantiation: the target's wrapper
// instantiates the entry.
//
// # Templates
//
// An entry is a kernel function (by name or [[host_name]]) or an explicit
// instantiation with a host_name of a template kernel, written out or
// made by a macro (MLX's instantiate_kernel). The kernel's template
// header is kept as written, default arguments included, so an
// instantiation may leave defaulted parameters out; a function-pointer
// template parameter is a parameter like any other. Address spaces that
// tell overloads apart in Metal (a member function qualified thread,
// device, threadgroup or constant, as MLX's bfloat conversions are;
// parameters pointing to different address spaces) are gone in C++: the
// translations of such overloads are one function, kept once; overloads
// whose bodies then differ are an error.
//
// # Threadgroup memory
//
// The entry's threadgroup storage is laid out as msl.ThreadgroupMemory
// lays it out (the kernel's declarations, then those of the helpers it
// calls, breadth first), so a backend's total and the source estimate
// agree by construction. Each declaration is given to the target with its
// slot in that layout, its type and dimensions as written, and the same
// with the function's local typedefs and constants replaced by what they
// stand for, valid at namespace scope (arrays sized by a local constexpr,
// MLX's `typename gemv_kernel::acc_type`). Storage in a kept function the
// entry does not reach has no slot.
//
// # Targets
//
// A [Target] spells what differs: the prelude include, address-space
// keywords in their [Context], the qualifier of every kept function, the
// declaration of threadgroup storage, function constants, and the wrapper
// that binds buffers, threadgroup memory and thread positions to the
// entry's parameters ([Entry], [Param]). The core classifies parameters:
// [[buffer(n)]] and [[threadgroup(n)]] indices (macros expanded, named
// constants evaluated), thread-position attributes, and a device or
// constant parameter without an attribute takes the next index no
// [[buffer(n)]] names. Both targets share the token-local rules: half
// literals (1.0h is metal::half(1.0)), unsuffixed floating literals (a
// float in Metal: 0.5 is 0.5f), swizzles (v.xy is v.mtl_rv_xy() where it
// is only read, the write-back proxy v.xy() elsewhere; a struct field
// named like a swizzle is left alone), is_function_constant_defined, and
// attributes, which are dropped.
//
// A target that puts the source in a namespace of its own (the CUDA
// target's metal::mtl_src, away from CUDA's global float4 and fmax) is a
// [Namespacer]: the core gives it the functions the source declares at its
// global scope that metal_stdlib also declares, so that they overload
// metal's as in Metal instead of hiding them. An address-space keyword's
// [Context] says, at namespace scope, whether the declaration is of
// scalars (Context.Scalar): device code reads a constexpr scalar as it is,
// an array or object only from device memory.
//
// # Tests
//
// testdata/golden holds one archive per case, shared by the targets: the
// kernel, its headers, settings, and a want section per target
// (package translatetest; go test ./translate/... -update rewrites them).
package translate
