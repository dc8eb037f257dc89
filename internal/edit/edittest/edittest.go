// Package edittest holds the shared table of edit cases that the edit
// package's tests and fuzz seeds are built from.
package edittest

import "metalab/internal/edit"

// A TestCase is a source, a set of valid edits and the expected result.
type TestCase struct {
	Name    string
	In, Out string
	Edits   []edit.Edit
}

// TestCases are valid edit sets with their expected results, covering
// insertions, deletions, replacements, ordering at equal offsets and edges.
var TestCases = []TestCase{
	{Name: "empty", In: "", Out: ""},
	{Name: "no_edits", In: "abc\n", Out: "abc\n"},
	{Name: "insert_start", In: "for\n", Out: "#pragma x\nfor\n", Edits: []edit.Edit{{Start: 0, End: 0, New: "#pragma x\n"}}},
	{Name: "insert_end", In: "abc", Out: "abc\n", Edits: []edit.Edit{{Start: 3, End: 3, New: "\n"}}},
	{Name: "insert_into_empty", In: "", Out: "x", Edits: []edit.Edit{{Start: 0, End: 0, New: "x"}}},
	{Name: "delete_line", In: "a\n  b();\nc\n", Out: "a\nc\n", Edits: []edit.Edit{{Start: 2, End: 9}}},
	{Name: "replace_middle", In: "a+b", Out: "a-b", Edits: []edit.Edit{{Start: 1, End: 2, New: "-"}}},
	{Name: "delete_all", In: "abc", Out: "", Edits: []edit.Edit{{Start: 0, End: 3}}},
	{
		Name: "unsorted", In: "0123456789", Out: "X0123Y6789Z",
		Edits: []edit.Edit{{Start: 10, End: 10, New: "Z"}, {Start: 4, End: 6, New: "Y"}, {Start: 0, End: 0, New: "X"}},
	},
	{
		Name: "insert_before_replace_same_offset", In: "abc", Out: "aXYc",
		Edits: []edit.Edit{{Start: 1, End: 2, New: "Y"}, {Start: 1, End: 1, New: "X"}},
	},
	{
		Name: "equal_offset_inserts_keep_order", In: "ab", Out: "a123b",
		Edits: []edit.Edit{{Start: 1, End: 1, New: "1"}, {Start: 1, End: 1, New: "2"}, {Start: 1, End: 1, New: "3"}},
	},
	{
		Name: "adjacent_replacements", In: "abcd", Out: "aXYd",
		Edits: []edit.Edit{{Start: 2, End: 3, New: "Y"}, {Start: 1, End: 2, New: "X"}},
	},
	{
		Name: "insert_at_end_of_replacement", In: "abc", Out: "aXYc",
		Edits: []edit.Edit{{Start: 2, End: 2, New: "Y"}, {Start: 1, End: 2, New: "X"}},
	},
	{
		Name: "crlf", In: "a\r\n  b;\r\nc\r\n", Out: "a\r\nc\r\n",
		Edits: []edit.Edit{{Start: 3, End: 9}},
	},
	{
		Name: "multibyte", In: "α=1;", Out: "β=1;",
		Edits: []edit.Edit{{Start: 0, End: 2, New: "β"}},
	},
}
