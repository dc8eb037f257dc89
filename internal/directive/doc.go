// Package directive is metalab's one reading of the C preprocessor's
// directive layer, shared by msl's lexer and the translator's vetting pass:
// line splices (a backslash before a line break), where a directive starts
// and ends, its name and operands, the #define syntax, the meaning of an
// #if, #ifdef or #elif condition, and which definition of a macro is in
// effect at a point of the source.
//
// The callers differ only in what they know: msl decides each file alone,
// so a name it has not seen is unknown to it; the vetting pass walks the
// includes in the compiler's order, so a name nobody defined is certainly
// undefined. Each describes its knowledge through a Lookup; the meaning of
// the directives is this package's.
//
// Conditions are three-valued. Eval answers with the value the compiler's
// preprocessor computes, or not at all: it follows C++'s rules for #if
// (intmax_t and uintmax_t arithmetic, true and false, defined, object-like
// macros substituted as tokens and rescanned), and reports unknown where
// an operand is unknown and matters, where a function-like macro would be
// expanded, or where the compiler would diagnose or clang and gcc differ
// (division by zero, a shift count out of range).
package directive
