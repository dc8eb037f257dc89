package msl

import (
	"os"
	"testing"
)

// BenchmarkParseFile parses and enumerates a real Metal source named by
// METALAB_PARSE_FILE, the way BenchmarkParseLarge does a synthetic one, so
// that parse speed can be measured on files too large or too foreign to
// keep in the repository.
func BenchmarkParseFile(b *testing.B) {
	name := os.Getenv("METALAB_PARSE_FILE")
	if name == "" {
		b.Skip("set METALAB_PARSE_FILE to a .metal file to benchmark parsing it")
	}
	src, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	f, err := Parse(name, src)
	if err != nil {
		b.Fatalf("Parse: %v", err)
	}
	c, err := enumerate(f)
	if err != nil {
		b.Fatalf("enumerate: %v", err)
	}
	b.Logf("%s: %d bytes, %+v", name, len(src), c)
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for b.Loop() {
		f, err := Parse(name, src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := enumerate(f); err != nil {
			b.Fatal(err)
		}
	}
}
