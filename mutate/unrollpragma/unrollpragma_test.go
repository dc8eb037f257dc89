package unrollpragma_test

import (
	"strings"

	"metalab/msl"
	"metalab/mutate"
	"testing"

	"metalab/mutate/mutatetest"
	"metalab/mutate/unrollpragma"
)

func TestGolden(t *testing.T) {
	mutatetest.Run(t, "testdata", unrollpragma.Mutation)
}

func TestChoices(t *testing.T) {
	tests := []struct {
		header string
		want   string
	}{
		{"for (int i = 0; i < 1; ++i)", "full,disable"},
		{"for (int i = 0; i < 2; ++i)", "full,count2,disable"},
		{"for (int i = 0; i < 7; ++i)", "full,count2,count4,disable"},
		{"for (int i = 0; i < 64; ++i)", "full,count2,count4,count8,count16,disable"},
		{"for (int i = 0; i < 6; ++i)", "full,count2,count3,count4,disable"},
		{"for (int i = 0; i < 60; ++i)", "full,count2,count3,count4,count5,count6,count8,count10,count12,count15,disable"},
		{"for (int i = 0; i < n; ++i)", "full,count2,count4,disable"},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			src := "kernel void k(device int *p [[buffer(0)]], constant int &n [[buffer(1)]]) {\n    " + tt.header + " { p[i] = 0; }\n}\n"
			f, err := msl.Parse("k.metal", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			found, err := mutate.Find(f, []*mutate.Mutation{unrollpragma.Mutation}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != 1 {
				t.Fatalf("got %d sites, want 1", len(found))
			}
			if got := strings.Join(found[0].ChoiceNames(), ","); got != tt.want {
				t.Errorf("choices = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestPlacement(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"own_line", "{\n    for (;;) {}\n}\n", "{\n    #pragma P\n    for (;;) {}\n}\n"},
		{"after_if", "{\n\tif (c) for (;;) {}\n}\n", "{\n\tif (c)\n\t#pragma P\n\tfor (;;) {}\n}\n"},
		{"after_brace_tab", "{\n  {\tfor (;;) {} }\n}\n", "{\n  {\n  #pragma P\n  for (;;) {} }\n}\n"},
		{"crlf", "{\r\n  if (c) for (;;) {}\r\n}\r\n", "{\r\n  if (c)\r\n  #pragma P\r\n  for (;;) {}\r\n}\r\n"},
		{"continued", "{\n  if (c) \\\n  for (;;) {}\n}\n", "{\n  if (c) \\\n\n  #pragma P\n  for (;;) {}\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			pos := strings.Index(tt.src, "for")
			at, end, before, after := unrollpragma.Placement(src, pos)
			got := tt.src[:at] + before + "#pragma P" + after + tt.src[end:]
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
