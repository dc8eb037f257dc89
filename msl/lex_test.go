package msl

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"metalab/internal/directive"
)

// kinds renders tokens as "Kind:text" for table tests.
func kinds(toks []Token) string {
	var parts []string
	for _, t := range toks {
		parts = append(parts, fmt.Sprintf("%s:%s", kindName[t.Kind], t.Text))
	}
	return strings.Join(parts, " ")
}

var kindName = map[Kind]string{
	EOF: "EOF", Ident: "Ident", Int: "Int", Float: "Float", String: "String", Char: "Char",
	Punct: "Punct", Comment: "Comment", Directive: "Directive", Attribute: "Attribute", Skipped: "Skipped",
}

func TestLex(t *testing.T) {
	tests := []struct {
		name, give, want string
	}{
		{"ident", "kernel void f", "Ident:kernel Ident:void Ident:f"},
		{"ints", "42 0x1Fu 0b101 017 1'000 7ul", "Int:42 Int:0x1Fu Int:0b101 Int:017 Int:1'000 Int:7ul"},
		{"floats", "1.0h 2.f 1e-3f .5f 1.0H 3.5 1E+2 0x1p-2 2f", "Float:1.0h Float:2.f Float:1e-3f Float:.5f Float:1.0H Float:3.5 Float:1E+2 Float:0x1p-2 Float:2f"},
		{"hex e is a digit", "0x1e+2", "Int:0x1e Punct:+ Int:2"},
		{"strings", `"a\"b" "c"`, `String:"a\"b" String:"c"`},
		{"prefixed", `u8"x" L'a' R"d(x")d"`, `String:u8"x" Char:L'a' String:R"d(x")d"`},
		{"chars", `'a' '\''`, `Char:'a' Char:'\''`},
		{"comments", "a // line\n/* block\n */ b", "Ident:a Comment:// line Comment:/* block\n */ Ident:b"},
		{"longest match", "a<<=b->*c...d::e>>=f<=>g", "Ident:a Punct:<<= Ident:b Punct:->* Ident:c Punct:... Ident:d Punct::: Ident:e Punct:>>= Ident:f Punct:<=> Ident:g"},
		{"operators", "++--&&||!=== ->", "Punct:++ Punct:-- Punct:&& Punct:|| Punct:!= Punct:== Punct:->"},
		{"directive", "#define X 1\nX", "Directive:#define X 1 Ident:X"},
		{"directive continuation", "#define F(a) \\\n  (a + 1)  \nF", "Directive:#define F(a) \\\n  (a + 1) Ident:F"},
		{"indented directive", "  # pragma unroll\nfor", "Directive:# pragma unroll Ident:for"},
		{"hash not at line start", "a # b", "Ident:a Punct:# Ident:b"},
		{"directive after block comment", "/* c */ #pragma x\ny", "Comment:/* c */ Directive:#pragma x Ident:y"},
		{"directive with multi-line comment", "#define A 1 /* x\ny */ z\nw", "Directive:#define A 1 /* x\ny */ z Ident:w"},
		{"attribute", "f [[buffer(0)]] [[kernel]]", "Ident:f Attribute:[[buffer(0)]] Attribute:[[kernel]]"},
		{"attribute with string", `[[host_name("a]]b")]]`, `Attribute:[[host_name("a]]b")]]`},
		{"attribute list", "[[ thread_position_in_grid, x(a[1]) ]]", "Attribute:[[ thread_position_in_grid, x(a[1]) ]]"},
		{"lambda capture in subscript", "a[[&]{return 0;}()]", "Ident:a Punct:[ Punct:[ Punct:& Punct:] Punct:{ Ident:return Int:0 Punct:; Punct:} Punct:( Punct:) Punct:]"},
		{"_Pragma", `_Pragma("unroll") for`, `Ident:_Pragma Punct:( String:"unroll" Punct:) Ident:for`},
		{"if 0 skipped", "#if 0\ndon't @ `x`\n#endif\na", "Directive:#if 0 Skipped:don't @ `x` Directive:#endif Ident:a"},
		{"if 1 else skipped", "#if 1\na\n#else\n'\n#endif", "Directive:#if 1 Ident:a Directive:#else Skipped:' Directive:#endif"},
		{"nested skipped", "#if 0\n#if X\n#else\n#endif\nq\n#elif 1\nb\n#endif", "Directive:#if 0 Skipped:#if X\n#else\n#endif\nq Directive:#elif 1 Ident:b Directive:#endif"},
		{"define decides", "#define USE 0\n#if USE\nx\n#endif", "Directive:#define USE 0 Directive:#if USE Skipped:x Directive:#endif"},
		{"unknown is lexed", "#if FOO\nit's\n#endif", "Directive:#if FOO Ident:it Punct:' Ident:s Directive:#endif"},
		{"backslash newline trivia", "a \\\n b", "Ident:a Ident:b"},
		{"crlf", "#define A 1\r\nb // c\r\n", "Directive:#define A 1 Ident:b Comment:// c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks, err := Lex("t.metal", []byte(tt.give))
			if err != nil {
				t.Fatalf("Lex: %v", err)
			}
			if got := kinds(toks); got != tt.want {
				t.Errorf("Lex(%q)\n got %s\nwant %s", tt.give, got, tt.want)
			}
			checkRoundTrip(t, []byte(tt.give), toks)
		})
	}
}

func TestLexErrors(t *testing.T) {
	tests := []struct {
		name, give, want string
	}{
		{"unterminated comment", "a\n  /* x", "t.metal:2:3: unterminated comment"},
		{"unterminated string", "x = \"abc\ny", "t.metal:1:5: unterminated string literal"},
		{"unterminated char", "c = 'a", "t.metal:1:5: unterminated character literal"},
		{"at sign", "a @ b", "t.metal:1:3: invalid character \"@\""},
		{"dollar", "\n $", "t.metal:2:2: invalid character \"$\""},
		{"backtick", "`", "t.metal:1:1: invalid character \"`\""},
		{"non-ascii", "float é;", "t.metal:1:7: invalid character U+00E9"},
		{"bad utf8", "a \xff", "t.metal:1:3: invalid byte 0xff"},
		{"stray backslash", "a \\ b", "t.metal:1:3: invalid character \"\\\\\""},
		{"unterminated if", "#if X\na", "t.metal:1:1: unterminated #if"},
		{"unterminated if 0", "#if 0\na", "t.metal:1:1: unterminated #if"},
		{"endif without if", "#endif", "t.metal:1:1: #endif without #if"},
		{"else without if", "\n#else", "t.metal:2:1: #else without #if"},
		{"unterminated raw string", `R"x(abc`, "t.metal:1:1: unterminated raw string literal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			toks, err := Lex("t.metal", []byte(tt.give))
			if err == nil {
				t.Fatalf("Lex(%q) succeeded, want error %q", tt.give, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Lex(%q) error\n got %s\nwant %s", tt.give, got, tt.want)
			}
			checkRoundTrip(t, []byte(tt.give), toks)
		})
	}
}

// TestLexLenient checks that text in undecided #if branches does not
// produce errors.
func TestLexLenient(t *testing.T) {
	src := "#ifdef DEBUG\nprintf(\"don't\n@ $ é\n#endif\n"
	toks, err := Lex("t.metal", []byte(src))
	if err != nil {
		t.Fatalf("Lex: %v", err)
	}
	checkRoundTrip(t, []byte(src), toks)
	// The same text outside a conditional is an error.
	if _, err := Lex("t.metal", []byte("@")); err == nil {
		t.Errorf("Lex(@) succeeded outside a conditional")
	}
}

// checkRoundTrip verifies the token invariants: tokens are ordered, their
// Text is their source range, and the gaps are whitespace or
// backslash-newlines only.
func checkRoundTrip(t *testing.T, src []byte, toks []Token) {
	t.Helper()
	var b strings.Builder
	prev := 0
	for _, tok := range toks {
		if tok.Pos < prev || tok.End <= tok.Pos || tok.End > len(src) {
			t.Fatalf("bad token span %d-%d after %d (len %d): %q", tok.Pos, tok.End, prev, len(src), tok.Text)
		}
		if string(src[tok.Pos:tok.End]) != tok.Text {
			t.Fatalf("token text %q != source %q", tok.Text, src[tok.Pos:tok.End])
		}
		checkGap(t, src[prev:tok.Pos])
		b.Write(src[prev:tok.Pos])
		b.WriteString(tok.Text)
		prev = tok.End
	}
	checkGap(t, src[prev:])
	b.Write(src[prev:])
	if b.String() != string(src) {
		t.Fatalf("round trip mismatch")
	}
}

func checkGap(t *testing.T, gap []byte) {
	t.Helper()
	for i := 0; i < len(gap); i++ {
		c := gap[i]
		if c == '\\' && i+1 < len(gap) && (gap[i+1] == '\n' || gap[i+1] == '\r') {
			continue
		}
		if !isSpace(c) {
			t.Fatalf("non-whitespace byte %q in trivia %q", c, gap)
		}
	}
}

func FuzzLex(f *testing.F) {
	for _, s := range []string{
		"kernel void f(device float* a [[buffer(0)]]) { a[0] = 1.0h; }",
		"#define X(a) \\\n a\n#if 0\n'\n#endif\n",
		"/* unterminated",
		"R\"d(raw)d\" u8\"s\" '\\''",
		"a[[&]{}()]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		toks, _ := Lex("fuzz.metal", src)
		checkRoundTrip(t, src, toks)
	})
}

// TestLexErrorOnce checks that a directive the lexer looks at twice (an
// include guard check, then the directive itself) reports its error once.
func TestLexErrorOnce(t *testing.T) {
	_, err := Lex("t.metal", []byte("#ifndef G\n#define G /* open\n"))
	if err == nil {
		t.Fatal("no error")
	}
	want := "t.metal:1:1: unterminated #if\nt.metal:2:11: unterminated comment"
	if got := err.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestErrorListCapped checks that a file of garbage gives at most MaxShown
// error lines and a count of the rest, not one line per bad byte.
func TestErrorListCapped(t *testing.T) {
	src := make([]byte, 200)
	for i := range src {
		src[i] = byte(0x80 + i%64) // invalid UTF-8 leading bytes and continuations
	}
	_, err := Parse("bin.metal", src)
	if err == nil {
		t.Fatal("no error for binary input")
	}
	var l ErrorList
	if !errors.As(err, &l) || len(l) <= MaxShown {
		t.Fatalf("error = %v, want an ErrorList of more than %d errors", err, MaxShown)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != MaxShown+1 {
		t.Errorf("got %d lines, want %d:\n%s", len(lines), MaxShown+1, err)
	}
	if want := fmt.Sprintf("(and %d more errors)", len(l)-MaxShown); lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
	if !strings.HasPrefix(lines[0], "bin.metal:1:1: ") {
		t.Errorf("first line %q is not positioned at bin.metal:1:1", lines[0])
	}
}

// FuzzLexDirectives: the lexer's directives are exactly those
// directive.Scan finds, the one reading of where directives are that the
// vetting pass uses too, less those inside the inactive branches it skips.
func FuzzLexDirectives(f *testing.F) {
	for _, s := range []string{
		"#define A 1\n  # include \"x.h\"\nint s = \"#x\"; // #x\n/* #x\n#x */ #define B\n",
		"// a comment \\\n#define X 1\n#define Y /* a\n b */ 2\nR\"(\n#x\n)\"\n",
		"#define S \"/*\" x\n#pragma once\r\n#define T '\\\n'\n",
		"x \\\n#define Q\n/**/ # define R\n'#' #x\n",
		"a\"\\\n#0000000000", // a splice continues the literal: no directive
		"#if 0\n/*\n#endif\n*/\n\"#else\"\n/* a\n */ #elif 1\nB\n#endif\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		toks, _ := Lex("fuzz.metal", []byte(src))
		lexed := map[int]bool{}
		var skipped []Token
		for _, tk := range toks {
			switch tk.Kind {
			case Directive:
				lexed[tk.Pos] = true
			case Skipped:
				skipped = append(skipped, tk)
			}
		}
		scanned := map[int]bool{}
		for _, d := range directive.Scan(directive.LF([]byte(src))) {
			scanned[d.Pos] = true
			in := false
			for _, sk := range skipped {
				in = in || sk.Pos <= d.Pos && d.Pos < sk.End
			}
			if lexed[d.Pos] == in {
				t.Errorf("directive.Scan finds a directive at %d; msl lexed it %v, skipped it %v", d.Pos, lexed[d.Pos], in)
			}
		}
		for pos := range lexed {
			if !scanned[pos] {
				t.Errorf("msl lexed a directive at %d that directive.Scan does not find", pos)
			}
		}
	})
}

// TestLexSkippedComments: an inactive branch ends at a directive, not at a
// '#' in a comment or a literal, and a directive after a comment ends it.
func TestLexSkippedComments(t *testing.T) {
	src := "#if 0\n/*\n#endif\n*/\n\"#else\"\n/* a\n */ #elif 1\nB\n#endif\n"
	toks, err := Lex("t.metal", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tk := range toks {
		got = append(got, kindName[tk.Kind])
	}
	if want := "Directive Skipped Comment Directive Ident Directive"; strings.Join(got, " ") != want {
		t.Errorf("tokens %s, want %s (%s)", strings.Join(got, " "), want, kinds(toks))
	}
}
