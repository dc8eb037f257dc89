package msl

import "go/token"

// This file is the contract other packages build on: the token and syntax
// types of the Metal Shading Language front end. All offsets are byte
// offsets into File.Src; End is one past the last byte.

// A Kind classifies a token.
type Kind int

const (
	EOF       Kind = iota
	Ident          // identifiers and keywords (kernel, device, for, ...)
	Int            // integer literal, suffix included: 0x1Fu, 42
	Float          // floating literal, suffix included: 1.0h, 2.f, 1e-3f
	String         // string literal (one token per literal; adjacent literals are separate tokens)
	Char           // character literal
	Punct          // operator or punctuator: + ++ <<= :: -> ... etc.
	Comment        // // or /* */ comment
	Directive      // a whole preprocessor line, backslash continuations included, no trailing newline
	Attribute      // a whole [[...]] attribute list, brackets included
	Skipped        // an inactive #if/#elif/#else branch kept verbatim; its text is not lexed
)

// A Token is one lexical element. Whitespace between tokens is trivia:
// concatenating src[prev.End:tok.Pos] and tok.Text for all tokens in order
// reproduces the file byte for byte.
type Token struct {
	Kind     Kind
	Pos, End int    // byte offsets
	Text     string // src[Pos:End]
}

// A Node is anything with a byte range in the source.
type Node interface {
	Span() (pos, end int)
}

// A Span is an opaque byte range [Pos, End) kept verbatim.
type Span struct{ Pos, End int }

// AddrSpace is a Metal address space qualifier.
type AddrSpace int

const (
	NoSpace AddrSpace = iota
	Device
	Constant
	Threadgroup
	ThreadSpace // "thread"
)

// An Attr is one attribute inside a [[...]] list, e.g. buffer(0).
type Attr struct {
	Pos, End int
	Name     string   // "buffer", "thread_position_in_grid", "host_name", "function_constant", "kernel"
	Args     []string // raw argument texts, trimmed; nil when there are no parentheses
}

// A Param is one function parameter.
type Param struct {
	Pos, End  int
	AddrSpace AddrSpace
	Type      string // type text without address space and name, whitespace-normalised: "const float*", "uint3", "constant Params&" minus "constant"
	Name      string
	NamePos   int
	Attrs     []*Attr
}

// FuncKind says what a function is.
type FuncKind int

const (
	Helper FuncKind = iota
	Kernel          // kernel / [[kernel]] entry point
)

// A Func is one function definition or declaration.
type Func struct {
	Kind             FuncKind
	Name             string
	NamePos          int
	Pos, End         int      // whole definition: template header, attributes and qualifiers through the closing brace or ';'
	Template         []string // template parameter names, in order; nil if not a template
	TemplateDefaults []string // default argument text of each template parameter ("" where none), parallel to Template; nil when no parameter has one
	SpecArgs         []string // template arguments of an explicit specialisation (template<> bool cmp<3>(...) gives ["3"]); nil otherwise
	Owner            string   // enclosing struct name for member functions, else ""
	ReturnType       string
	Lparen, Rparen   int
	Params           []*Param
	Body             *Block            // nil for a declaration
	Attrs            []*Attr           // attributes before the name: kernel, host_name("x"), ...
	Types            map[string]string // typedef and using aliases declared in the body: name → aliased type text; nil when none
	Namespace        string            // the enclosing namespaces, ns::inner; "" at global scope

	file *File // the file the function's offsets refer to
}

// An Instantiation is `template [[host_name("x")]] kernel void f<T, 4>(...);`.
type Instantiation struct {
	Pos, End int
	HostName string
	Func     string   // the template's name
	Args     []string // template argument texts
}

// A Define is a #define.
type Define struct {
	Pos, End int
	Name     string
	Params   []string // nil for object-like macros
	FuncLike bool
	Body     string // replacement text, continuations joined

	undef     bool  // an #undef of Name, kept only in File.defs so lookups honour it
	uncertain bool  // in a branch whose condition the lexer could not decide
	bodyPos   int   // offset of Body's first byte in the source, or 0 when unknown
	from      *File // the header the definition was read from, when merged from an #include; nil for the file's own
}

// A Struct is a struct or class definition (fields as declarations).
type Struct struct {
	Pos, End         int
	Name             string
	Fields           []*Decl
	Methods          []*Func
	Template         []string          // template parameter names; nil if not a template
	SpecArgs         []string          // the pattern of a partial or explicit specialisation (struct S<T, false> gives ["T", "false"]); nil for a primary template or a plain struct
	Union            bool              // a union: fields overlap
	Alignas          string            // argument of alignas(...) on the struct, or ""
	Types            map[string]string // member typedef and using aliases: name → aliased type text; nil when none
	TemplateDefaults []string          // default argument text of each template parameter ("" where none); nil when none has one
	Namespace        string            // the enclosing namespaces, ns::inner; "" at global scope

	file *File // the file the struct's offsets refer to
}

// A Stmt is a statement inside a function body.
type Stmt interface {
	Node
	stmt()
}

// A Block is `{ ... }`.
type Block struct {
	Lbrace, Rbrace int // offsets of '{' and '}'
	Stmts          []Stmt
}

// A Pragma is a pragma that precedes a statement: `#pragma ...`, `_Pragma("...")`,
// or a use of a macro known to expand to a pragma.
type Pragma struct {
	Pos, End int
	Text     string // pragma text without "#pragma" / _Pragma quoting, e.g. "clang loop unroll(full)"
	Macro    string // name of the macro when the pragma came from a macro use, else ""
}

// A For is a for loop.
type For struct {
	Pos, End         int // "for" through end of body
	Lparen, Rparen   int
	Init, Cond, Post Span // may be empty (Pos == End)
	Body             Stmt
	Pragmas          []*Pragma // pragmas immediately before the loop, in order
}

// A While is a while loop.
type While struct {
	Pos, End int
	Cond     Span
	Body     Stmt
	Pragmas  []*Pragma
}

// A Do is a do-while loop.
type Do struct {
	Pos, End int // "do" through ';'
	Body     Stmt
	Cond     Span
	Pragmas  []*Pragma
}

// An If is an if statement, possibly with else.
type If struct {
	Pos, End int
	Cond     Span
	Then     Stmt
	Else     Stmt // or nil
}

// A Declarator is one name in a declaration.
type Declarator struct {
	Name    string
	NamePos int
	Dims    []Span // array dimension expressions
	Init    Span   // initialiser text after '=' or braces; empty if none
}

// A Decl is a declaration statement, e.g. `threadgroup float s[4][64];`.
type Decl struct {
	Pos, End   int // through ';'
	AddrSpace  AddrSpace
	Qualifiers []string // const, constexpr, static, ...
	Type       string
	TypeSpan   Span
	Names      []*Declarator
	Attrs      []*Attr // attributes in the declaration, e.g. function_constant(0)
}

// A Switch is a switch statement; case and default labels inside its body
// are ExprStmts ending at their colon.
type Switch struct {
	Pos, End int
	Cond     Span
	Body     Stmt
}

// A Barrier is a statement that is a call of threadgroup_barrier or simdgroup_barrier.
type Barrier struct {
	Pos, End int // through ';'
	Name     string
	Args     Span
}

// A MacroUse is a statement that is a use of a macro whose body hides a loop
// or a barrier: a function-like macro, or an object-like one used as a
// statement (`SYNC;`) or as a loop header (`EACH4 { ... }`).
type MacroUse struct {
	Pos, End int
	Name     string
	Hides    string // "loop", "barrier", or "" when it hides neither
	Body     Stmt   // for a macro that expands to a loop header, the loop body after the use; else nil
	Unknown  bool   // the macro is defined nowhere the front end can see (not in the file, its includes or -D); Hides is then a guess from how it is used
}

// A Return, Break, Continue or other simple statement is kept as an ExprStmt.
// An ExprStmt is any other statement, kept verbatim.
type ExprStmt struct {
	Pos, End int      // through ';'
	Calls    []string // names of functions called in the statement
}

func (b *Block) Span() (int, int)    { return b.Lbrace, b.Rbrace + 1 }
func (s *For) Span() (int, int)      { return s.Pos, s.End }
func (s *While) Span() (int, int)    { return s.Pos, s.End }
func (s *Do) Span() (int, int)       { return s.Pos, s.End }
func (s *If) Span() (int, int)       { return s.Pos, s.End }
func (s *Decl) Span() (int, int)     { return s.Pos, s.End }
func (s *Barrier) Span() (int, int)  { return s.Pos, s.End }
func (s *MacroUse) Span() (int, int) { return s.Pos, s.End }
func (s *ExprStmt) Span() (int, int) { return s.Pos, s.End }
func (s *Switch) Span() (int, int)   { return s.Pos, s.End }
func (s Span) Span() (int, int)      { return s.Pos, s.End }
func (f *Func) Span() (int, int)     { return f.Pos, f.End }
func (p *Param) Span() (int, int)    { return p.Pos, p.End }
func (a *Attr) Span() (int, int)     { return a.Pos, a.End }

func (*Block) stmt()    {}
func (*For) stmt()      {}
func (*While) stmt()    {}
func (*Do) stmt()       {}
func (*If) stmt()       {}
func (*Decl) stmt()     {}
func (*Barrier) stmt()  {}
func (*MacroUse) stmt() {}
func (*ExprStmt) stmt() {}
func (*Switch) stmt()   {}

// A File is a parsed Metal source file.
type File struct {
	Name           string
	Src            []byte
	Tokens         []Token // comments included
	Funcs          []*Func // every function, in source order, member functions included
	Structs        []*Struct
	Defines        []*Define
	Instantiations []*Instantiation
	Globals        []*Decl           // file-scope declarations (constant/constexpr/static const, function constants)
	Enums          map[string]int64  // enumerator values, by plain and Enum::qualified name
	Types          map[string]string // typedef and using aliases: name → aliased type text
	TokFile        *token.File       // line table for Position
	CmdDefines     map[string]string // -D defines ParseWith was given; Env evaluation consults them after its own Defines
	Includes       []*Include        // #include directives, in order, with the headers read for them
	Expansions     []*Expansion      // file-scope macro uses whose expansion defines functions (kernels written inside #define bodies)
	Warnings       ErrorList         // what the front end could not see through (unknown macros, headers not found, -D overridden), positioned; never fatal
	CmdUndefs      []string          // -U names ParseOptions was given, in order

	defs  map[string][]*Define // Defines by name, in source order; built by Parse
	funcs map[string]*Func     // first definition with a body, by name; built by Parse
	idx   *fileIndex           // name lookups for evaluation and entry points; built by Parse

	outer    map[string]*Define // a header's view of the macros its includer defined before the #include
	includer *File              // for a header, the file that included it first: its names are in scope after the header's own
	parent   *File              // the file a macro expansion was parsed from; its names are in scope
	parentAt int                // offset in parent of the macro use
	// macroBudget is the macro-use expansion budget a macro's expansion
	// shares with the file it came from, so that expansions nested in
	// expansions are bounded as a whole (nil: a budget of its own).
	macroBudget *int
	macro       string          // for an expansion, the macro used
	pureMacros  map[string]bool // IsPureMacro, memoised
	calls       *callGraph      // the call graph, built on first use (on the root file)
	unknownAt   map[int]string  // statement offset → unknown macro used just before it
	origin      []int32         // for an expansion, pairs of (offset here, offset in parent) per token; sorted
	parseErr    error           // what parseFile found wrong
	done        <-chan struct{} // SetContext's; closed when the analyses are to stop
}

// Position returns the file:line:col position of a byte offset.
func (f *File) Position(off int) token.Position { return f.TokFile.Position(f.TokFile.Pos(off)) }

// An Error is a positioned error.
type Error struct {
	Pos token.Position
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }
