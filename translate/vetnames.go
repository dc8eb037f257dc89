package translate

import "strings"

// This file holds the vocabularies the vetting pass judges names by: C++
// and Metal keywords, the attributes Metal defines, the predefined macros a
// kernel may name, and the C library functions a kernel might try to reach.

// setOf makes a set from space-separated words.
func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// cppKeywords are the C++17 keywords and alternative tokens. None of them
// names a function, so none is looked up when followed by '('.
var cppKeywords = setOf(`alignas alignof and and_eq asm auto bitand bitor bool break case catch
	char char8_t char16_t char32_t class compl concept const consteval constexpr constinit const_cast
	continue co_await co_return co_yield decltype default delete do double dynamic_cast else enum
	explicit export extern false float for friend goto if inline int long mutable namespace new
	noexcept not not_eq nullptr operator or or_eq private protected public register
	reinterpret_cast requires return short signed sizeof static static_assert static_cast struct
	switch template this thread_local throw true try typedef typeid typename union unsigned using
	virtual void volatile wchar_t while xor xor_eq _Pragma`)

// metalKeywords are the words Metal adds: address spaces and function
// qualifiers.
var metalKeywords = setOf(`device constant thread threadgroup threadgroup_imageblock ray_data
	object_data kernel vertex fragment`)

// declSpecifiers are the keywords after which an identifier is being
// declared (`unsigned n`, `constant float x`): type keywords, decl-specifiers
// and address spaces. Any other keyword before an identifier (return, case,
// new, ...) makes it a use.
var declSpecifiers = setOf(`auto bool char char8_t char16_t char32_t double float int long short
	signed unsigned void wchar_t const volatile constexpr static inline mutable register extern
	friend explicit virtual thread_local device constant thread threadgroup
	threadgroup_imageblock ray_data object_data kernel vertex fragment`)

// builtinTypes are the C++ fundamental types and the fixed-width integer
// types <cstdint> gives the prelude (Metal kernels use uint8_t and friends).
var builtinTypes = setOf(`auto bool char char8_t char16_t char32_t double float int long short
	signed unsigned void wchar_t size_t ptrdiff_t int8_t int16_t int32_t int64_t uint8_t uint16_t
	uint32_t uint64_t intptr_t uintptr_t`)

// metalAttributes are the attributes of the Metal Shading Language
// specification: function, argument, thread-position, stage, ray-tracing
// and mesh attributes, and the standard C++ attributes Metal accepts.
var metalAttributes = setOf(`
	kernel vertex fragment visible stitchable intersection object mesh patch early_fragment_tests
	max_total_threads_per_threadgroup host_name user_annotation function_groups
	buffer texture sampler threadgroup threadgroup_imageblock imageblock_data stage_in color
	raster_order_group user id function_constant payload shared
	alias_implicit_imageblock alias_implicit_imageblock_color
	thread_position_in_grid thread_position_in_threadgroup thread_index_in_threadgroup
	threadgroup_position_in_grid threads_per_grid threads_per_threadgroup threadgroups_per_grid
	dispatch_threads_per_threadgroup thread_execution_width thread_index_in_simdgroup
	thread_index_in_quadgroup threads_per_simdgroup simdgroup_index_in_threadgroup
	simdgroups_per_threadgroup quadgroup_index_in_threadgroup quadgroups_per_threadgroup
	dispatch_simdgroups_per_threadgroup dispatch_quadgroups_per_threadgroup grid_origin grid_size
	position point_size clip_distance render_target_array_index viewport_array_index
	amplification_count amplification_id barycentric_coord front_facing point_coord primitive_id
	sample_id sample_mask depth stencil invariant flat center_perspective center_no_perspective
	centroid_perspective centroid_no_perspective sample_perspective sample_no_perspective
	vertex_id base_vertex instance_id base_instance patch_id position_in_patch attribute index
	origin direction min_distance max_distance distance geometry_id user_instance_id
	world_space_origin world_space_direction object_space_origin object_space_direction
	object_to_world_transform world_to_object_transform
	instance_intersection_function_table_offset geometry_intersection_function_table_offset
	time opaque
	noreturn carries_dependency deprecated fallthrough maybe_unused nodiscard likely unlikely
	no_unique_address`)

// harmlessGNUAttributes are the GNU attributes a kernel may write with
// __attribute__((...)) or [[gnu::...]] / [[clang::...]]: they steer
// inlining, warnings and layout, and none of them runs code, names a symbol
// or changes how the object file is built. MLX spells METAL_FUNC as
// `inline __attribute__((always_inline))`.
var harmlessGNUAttributes = setOf(`always_inline noinline unused maybe_unused aligned packed const
	pure flatten hot cold noreturn deprecated warn_unused_result nodiscard fallthrough likely
	unlikely optnone`)

// metalBuiltins are Metal functions the translator implements rather than
// the prelude.
var metalBuiltins = setOf(`is_function_constant_defined`)

// predefinedMacros are the double-underscore names a kernel may use: the
// macros Metal predefines (besides the __METAL_*__ and __HAVE_*__ families,
// see reservedAllowed), the standard preprocessor's own, and GCC's
// __extension__ (it only silences pedantic warnings; ggml's common header
// marks its anonymous unions with it).
var predefinedMacros = setOf(`__METAL__ __metal__ __LINE__ __FILE__ __COUNTER__ __VA_ARGS__
	__VA_OPT__ __cplusplus __func__ __FUNCTION__ __DATE__ __TIME__ __has_feature __has_extension
	__has_attribute __has_builtin __has_cpp_attribute __extension__`)

// reservedAllowed reports whether a name beginning with two underscores is
// one a kernel may use.
func reservedAllowed(name string) bool {
	if predefinedMacros[name] {
		return true
	}
	if metalInternal(name) || limitMacro(name) {
		return true
	}
	return strings.HasSuffix(name, "__") && (strings.HasPrefix(name, "__METAL_") || strings.HasPrefix(name, "__HAVE_"))
}

// limitMacro reports whether name is one of the compiler's predefined
// limits of the arithmetic types, __FLT16_MAX__, __FLT_EPSILON__,
// __INT_MAX__ and the like (ggml writes -__FLT16_MAX__/2): a number, no more.
func limitMacro(name string) bool {
	if !strings.HasSuffix(name, "__") || len(name) < 6 {
		return false
	}
	body := name[2 : len(name)-2]
	for _, p := range []string{"FLT16_", "FLT_", "DBL_", "HALF_", "BFLT16_", "SCHAR_", "SHRT_", "INT_", "LONG_", "LONG_LONG_", "INT8_", "INT16_", "INT32_", "INT64_", "UINT8_", "UINT16_", "UINT32_", "UINT64_", "SIZE_"} {
		if rest, ok := strings.CutPrefix(body, p); ok && rest != "" && strings.Trim(rest, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == "" {
			return true
		}
	}
	return false
}

// metalInternal reports whether a double-underscore name is one of the
// internals of Apple's Metal headers that public kernels call directly: the
// __metal_ functions behind metal_stdlib's math and simd functions (MLX's
// bf16_math.h wraps __metal_fabs and its siblings) and the type traits
// such as __is_valid_simdgroup_type (candle's reduce.metal). No host
// compiler has builtins of these spellings, so they reach nothing past the
// language; one metalab's metal_stdlib does not declare is refused as any
// undeclared name is, by name.
func metalInternal(name string) bool {
	return strings.HasPrefix(name, "__metal_") || strings.HasPrefix(name, "__is_valid_") || strings.HasPrefix(name, "__is_metal_")
}

// dangerousReserved reports whether a reserved name reaches past the
// language: GNU spellings of asm and attributes, builtins, the C++ ABI's
// runtime. In an #if branch msl finds inactive only these are refused, so
// that a branch meant for another compiler may hold its own __names.
func dangerousReserved(name string) bool {
	for _, p := range []string{"__builtin", "__asm", "__attribute", "__declspec", "__has_include", "__sync_", "__atomic_", "__cxa", "__pragma", "__thread", "__label__"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// hostFunctions are C library and POSIX functions a kernel might call to
// reach the machine running it. The prelude declares none of them (a test
// checks that the C++ compiler agrees), so a call is refused as any
// undeclared call is; the list only words the message.
var hostFunctions = setOf(`system popen pclose fopen freopen fdopen fclose fread fwrite fflush
	fprintf printf sprintf snprintf vprintf vfprintf vsprintf vsnprintf dprintf puts fputs putc
	fputc putchar getc getchar gets fgets fscanf scanf sscanf perror remove rename tmpfile tmpnam
	open openat creat close read write pread pwrite lseek unlink unlinkat mkdir rmdir chdir chmod
	chown link symlink readlink truncate ftruncate stat fstat lstat access exec execl execlp execle
	execv execvp execvpe execve fexecve fork vfork clone kill raise signal sigaction syscall ioctl
	fcntl mmap munmap mprotect dlopen dlsym dlclose exit _exit _Exit quick_exit atexit
	at_quick_exit abort getenv secure_getenv setenv putenv unsetenv malloc calloc realloc free
	aligned_alloc posix_memalign alloca memcpy memmove memset socket connect bind listen accept
	send recv sendto recvfrom pthread_create sleep usleep nanosleep setjmp longjmp`)

// metalHeader reports whether an angle-bracket include names one of
// Metal's own headers, which the prelude provides: <metal_stdlib>,
// <metal_*> and <simd/simd.h>.
func metalHeader(name string) bool {
	if name == "simd/simd.h" || name == "metal_stdlib" || tensorHeader(name) {
		return true
	}
	rest, ok := strings.CutPrefix(name, "metal_")
	if !ok || rest == "" {
		return false
	}
	rest = strings.TrimSuffix(rest, ".h")
	for _, c := range []byte(rest) {
		if !isWordByte(c) {
			return false
		}
	}
	return rest != ""
}

func isWordByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isIdentifier reports whether s is a C identifier.
func isIdentifier(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !isWordByte(c) {
			return false
		}
	}
	return true
}

// backendName reports whether a name belongs to the cpu backend: the
// runtime's mtl_rt namespace, the generated mtl_kernels table and wrappers
// (mtl_run_k, mtl_b, ...), which a kernel may not redefine as a macro, and
// the prelude's internal MTL_ macros, which it does not provide to kernels
// (a kernel may define its own MTL_ macros: MLX defines MTL_CONST).
func backendName(name string) bool {
	return strings.HasPrefix(name, "mtl_") || strings.HasPrefix(name, "MTL_")
}
