package translate

import "metalab/msl"

// A Target is what differs between the backends a translation is made
// for: the prelude a translation unit starts with, how address spaces are
// spelled, the qualifiers of functions, how threadgroup storage is
// declared, how function constants are defined and how the runner or host
// calls an entry point. Everything else (preprocessing, parsing, what is
// kept, literals, swizzles, positions) is the core's, the same for every
// target. A Target must be safe for concurrent use.
type Target interface {
	// Name names the target in messages: "cpu", "cuda".
	Name() string
	// Header is the text the translation unit starts with, ending in a
	// newline: the include of the target's prelude.
	Header() string
	// Keyword spells an address-space keyword of the source (device,
	// constant, threadgroup or thread) where context c has it; "" drops
	// it.
	Keyword(kw string, c Context) string
	// FuncPrefix is written before the declaration of every function the
	// translation keeps (after its template header): kernels, helpers and
	// member functions; "" for none.
	FuncPrefix(fn *msl.Func) string
	// Threadgroup translates one threadgroup storage declarator of a
	// function body. local replaces the declaration where it stands;
	// hoist, when not empty, is written at namespace scope before the
	// function (the core puts it on lines of its own, positioned at the
	// declaration).
	Threadgroup(v *TGVar) (local, hoist string, err error)
	// FunctionConstant is the namespace-scope definition of a function
	// constant with its value, replacing its declaration.
	FunctionConstant(c *FuncConst) string
	// Entry is the code written after the translated source that lets the
	// backend run e: a wrapper that binds buffers, threadgroup memory and
	// thread positions to the kernel's parameters and calls it, and
	// whatever table the runtime reads. The core writes it positioned at
	// the kernel's name.
	Entry(e *Entry) (string, error)
}

// A Context says where an address-space keyword stands.
type Context struct {
	Scope Scope
	// Const and Constexpr report whether const or constexpr stands next
	// to the keyword (`constant const float`, `constexpr constant int`):
	// C++ refuses a repeated const.
	Const, Constexpr bool
	// Scalar reports, in the FileScope context, whether the declaration
	// declares variables of an arithmetic type (bool, the integers, float;
	// not half or bfloat, which are classes in the prelude) and no arrays
	// or pointers: what a CUDA device function may read of a constexpr
	// host variable.
	Scalar bool
}

// A Namespacer is a Target that puts the translated source in a namespace
// of its own (the cuda target's metal::mtl_src) rather than at global
// scope. There, a function the source declares at its global scope hides
// metal_stdlib's functions of the same name, where Metal (and the cpu
// target, with the source's `using namespace metal;` at global scope)
// makes them one overload set: MLX adds 64-bit and bool overloads of
// simd_shuffle_down and calls metal's for 32 bits. The core calls
// Overloads after Header with the names, sorted, of the functions the
// translation keeps at the source's global scope that metal_stdlib
// declares in namespace metal; the text it returns (ending in a newline,
// "" when names is empty) makes metal's functions of those names members
// of the source's namespace.
type Namespacer interface {
	Overloads(names []string) string
}

// A Scope is the kind of declaration an address-space keyword qualifies.
type Scope int

const (
	// InType: a type, qualifying what a pointer or reference points to,
	// a parameter, a cast or a local declaration.
	InType Scope = iota
	// FileScope: a variable declared at namespace scope (`constant float
	// table[4] = {...};`).
	FileScope
	// StaticMember: a static data member of a struct (`static const
	// constant T min = ...;`), which Metal initialises in the struct
	// whatever its type, as C++ does only for constexpr.
	StaticMember
)

// A TGVar is one threadgroup storage declarator in a function the
// translation keeps.
type TGVar struct {
	// Slot is the index of the variable in its entry's Slots, the layout
	// msl.ThreadgroupMemory gives; -1 for a variable the entry does not
	// reach (in a function kept for another reason): it needs storage to
	// compile but is never laid out. ID is unique in the translation unit:
	// Slot where it is not -1, and beyond every slot otherwise.
	Slot, ID int
	// Instances is how many times the entry's layout holds the variable:
	// more than one for a template helper's storage reached with several
	// template arguments, each instantiation its own storage.
	Instances int
	// Func is the function that declares the variable, Entry whether it
	// is the entry's kernel.
	Func  *msl.Func
	Entry bool
	Name  string
	// Type and Dims are the element type and the array dimensions as
	// written, translated: valid where the declaration stands.
	Type string
	Dims []string
	// HoistType and HoistDims are Type and Dims with the function's local
	// typedefs and constants replaced by what they stand for: valid at
	// namespace scope before the function, under its template header.
	HoistType string
	HoistDims []string
	// Template is the function's template header, translated, default
	// arguments included ("" for a function that is not a template), and
	// TemplateNames its parameters' names.
	Template      string
	TemplateNames []string
	Namespace     string // the function's namespace, "" at global scope
	Pos           Position
}

// A FuncConst is a function constant: `constant T name
// [[function_constant(n)]];` with the value the source gives it.
type FuncConst struct {
	Name  string
	Type  string // translated, without the address space
	Value string // a C++ expression of the value, or Type's zero, T()
	Set   bool   // whether the source gives a value
}

// An Entry is the kernel a translation unit exports.
type Entry struct {
	Name      string    // the name the host asks for: the host_name or the function's name
	Func      *msl.Func // the kernel function (the template, for an instantiation)
	QualName  string    // the function's name qualified from the global namespace: ::ns::k
	Namespace string    // the function's namespace, "" at global scope
	// Template is the kernel's template header, translated, default
	// arguments included ("" for a kernel that is not a template);
	// TemplateNames are its parameters' names and TemplateArgs the
	// instantiation's arguments, translated (fewer than the names where
	// defaults apply).
	Template      string
	TemplateNames []string
	TemplateArgs  []string
	Params        []*Param
	Slots         []*TGVar // threadgroup storage, in layout order
	MaxThreads    int      // [[max_total_threads_per_threadgroup]], else 1024
	// Dispatched is the most threads per threadgroup the program will be
	// dispatched with (backend.Source.MaxThreads), 0 when not known.
	Dispatched int
	Pos        Position // the kernel's name
}

// A Binding says where a kernel parameter's value comes from.
type Binding int

const (
	BindBuffer      Binding = iota // a device or constant buffer, [[buffer(n)]] or implicit
	BindThreadgroup                // host-sized threadgroup memory, [[threadgroup(n)]]
	BindThread                     // a thread-position attribute
)

// A Param is one parameter of an entry point.
type Param struct {
	Name string
	// Type is the parameter's type, translated: the address space
	// dropped, const added for the constant address space.
	Type  string
	Space msl.AddrSpace
	Bind  Binding
	// Index is the buffer or threadgroup index, -1 when it is not a
	// literal; IndexExpr is its expression as written (a macro already
	// expanded, or a constant's name).
	Index     int
	IndexExpr string
	// Attr is the thread-position attribute (BindThread):
	// thread_position_in_grid, thread_index_in_simdgroup, ...
	Attr string
	// Writable reports whether the kernel may write the buffer: a device
	// pointer or reference to non-const data.
	Writable bool
	Pos      Position
}
