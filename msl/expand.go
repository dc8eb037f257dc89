package msl

// ExpandMacros macro-expands text the way the C preprocessor expands a line
// of code, with the macros lookup returns (nil for a name that is not a
// macro): object-like and function-like macros with # stringising, ##
// pasting, __VA_ARGS__ and rescanning, under the same bounds as the
// expansion of instantiation macros. It returns the expanded text, tokens
// separated by a space where the source had whitespace or two words would
// run together, and false when a bound was exceeded and the expansion is
// incomplete. Callers that track #define and #undef across several files
// (a header's macros used in the file that includes it) keep their own
// table and pass its lookup.
func ExpandMacros(text string, lookup func(name string) *Define) (string, bool) {
	m := &macroExpander{find: lookup}
	toks := m.expand(ppLex(text), nil, 0)
	if m.fail {
		return "", false
	}
	return ppJoin(toks), true
}
