package edit_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"metalab/internal/edit"
	"metalab/internal/edit/edittest"
)

func TestApply(t *testing.T) {
	for _, tc := range edittest.TestCases {
		t.Run(tc.Name, func(t *testing.T) {
			in := []byte(tc.In)
			got, err := edit.Apply(in, tc.Edits)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if string(got) != tc.Out {
				t.Errorf("Apply = %q, want %q", got, tc.Out)
			}
			if string(in) != tc.In {
				t.Errorf("Apply modified its input: %q", in)
			}
		})
	}
}

func TestApplyErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		edits   []edit.Edit
		wantErr string
	}{
		{"negative", "abc", []edit.Edit{{Start: -1, End: 1}}, "out of range"},
		{"past_end", "abc", []edit.Edit{{Start: 2, End: 4}}, "out of range"},
		{"insert_past_end", "abc", []edit.Edit{{Start: 4, End: 4, New: "x"}}, "out of range"},
		{"reversed", "abc", []edit.Edit{{Start: 2, End: 1}}, "out of range"},
		{"overlap", "abcdef", []edit.Edit{{Start: 1, End: 4}, {Start: 3, End: 5}}, "overlapping edits"},
		{"same_range", "abcdef", []edit.Edit{{Start: 1, End: 3, New: "x"}, {Start: 1, End: 3, New: "y"}}, "overlapping edits"},
		{"insert_inside_replacement", "abcdef", []edit.Edit{{Start: 1, End: 4}, {Start: 2, End: 2, New: "x"}}, "overlapping edits"},
		{"contained", "abcdef", []edit.Edit{{Start: 0, End: 6}, {Start: 2, End: 3}}, "overlapping edits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := edit.Apply([]byte(tt.in), tt.edits)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Apply error = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestSortStable(t *testing.T) {
	edits := []edit.Edit{
		{Start: 5, End: 7, New: "r"},
		{Start: 5, End: 5, New: "i1"},
		{Start: 1, End: 1, New: "a"},
		{Start: 5, End: 5, New: "i2"},
	}
	edit.Sort(edits)
	want := []edit.Edit{
		{Start: 1, End: 1, New: "a"},
		{Start: 5, End: 5, New: "i1"},
		{Start: 5, End: 5, New: "i2"},
		{Start: 5, End: 7, New: "r"},
	}
	if !slices.Equal(edits, want) {
		t.Errorf("Sort = %v, want %v", edits, want)
	}
}

func TestMerge(t *testing.T) {
	src := []byte("0123456789")
	tests := []struct {
		name     string
		x, y     []edit.Edit
		want     string // result of applying the merge; "" with conflict set
		conflict *edit.ConflictError
		wantErr  string
	}{
		{
			name: "disjoint",
			x:    []edit.Edit{{Start: 1, End: 2, New: "a"}},
			y:    []edit.Edit{{Start: 5, End: 6, New: "b"}},
			want: "0a234b6789",
		},
		{
			name: "identical_dedupe",
			x:    []edit.Edit{{Start: 1, End: 2, New: "a"}},
			y:    []edit.Edit{{Start: 1, End: 2, New: "a"}, {Start: 9, End: 9, New: "!"}},
			want: "0a2345678!9",
		},
		{
			name:     "overlap",
			x:        []edit.Edit{{Start: 1, End: 4}},
			y:        []edit.Edit{{Start: 3, End: 5, New: "z"}},
			conflict: &edit.ConflictError{X: edit.Edit{Start: 1, End: 4}, Y: edit.Edit{Start: 3, End: 5, New: "z"}},
		},
		{
			name:     "overlap_y_first",
			x:        []edit.Edit{{Start: 3, End: 5, New: "z"}},
			y:        []edit.Edit{{Start: 1, End: 4}},
			conflict: &edit.ConflictError{X: edit.Edit{Start: 3, End: 5, New: "z"}, Y: edit.Edit{Start: 1, End: 4}},
		},
		{
			name:     "same_offset_inserts",
			x:        []edit.Edit{{Start: 2, End: 2, New: "a"}},
			y:        []edit.Edit{{Start: 2, End: 2, New: "b"}},
			conflict: &edit.ConflictError{X: edit.Edit{Start: 2, End: 2, New: "a"}, Y: edit.Edit{Start: 2, End: 2, New: "b"}},
		},
		{
			name:     "same_offset_one_keyed",
			x:        []edit.Edit{{Start: 2, End: 2, New: "a", Key: "a"}},
			y:        []edit.Edit{{Start: 2, End: 2, New: "b"}},
			conflict: &edit.ConflictError{X: edit.Edit{Start: 2, End: 2, New: "a", Key: "a"}, Y: edit.Edit{Start: 2, End: 2, New: "b"}},
		},
		{
			name: "same_offset_keyed_inserts",
			x:    []edit.Edit{{Start: 2, End: 2, New: "b", Key: "2"}},
			y:    []edit.Edit{{Start: 2, End: 2, New: "a", Key: "1"}},
			want: "01ab23456789",
		},
		{
			name: "insert_before_other_deletion",
			x:    []edit.Edit{{Start: 2, End: 2, New: "#"}},
			y:    []edit.Edit{{Start: 2, End: 4}},
			want: "01#456789",
		},
		{
			name:    "overlap_within_one_set",
			x:       []edit.Edit{{Start: 1, End: 4}, {Start: 2, End: 3}},
			wantErr: "within one set",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := edit.Merge(tt.x, tt.y)
			var ce *edit.ConflictError
			switch {
			case tt.conflict != nil:
				if !errors.As(err, &ce) {
					t.Fatalf("Merge error = %v, want *ConflictError", err)
				}
				if *ce != *tt.conflict {
					t.Errorf("conflict = %+v, want %+v", *ce, *tt.conflict)
				}
				return
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Merge error = %v, want containing %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("Merge: %v", err)
			}
			out, err := edit.Apply(src, got)
			if err != nil {
				t.Fatalf("Apply(merged): %v", err)
			}
			if string(out) != tt.want {
				t.Errorf("Apply(merged) = %q, want %q", out, tt.want)
			}
		})
	}
}

func TestCheckScope(t *testing.T) {
	scopes := []edit.Span{{Start: 10, End: 20}, {Start: 30, End: 40}}
	tests := []struct {
		name    string
		edits   []edit.Edit
		wantErr string
	}{
		{"inside", []edit.Edit{{Start: 10, End: 12}, {Start: 40, End: 40, New: "x"}}, ""},
		{"none", nil, ""},
		{"before", []edit.Edit{{Start: 9, End: 12}}, "edit at [9,12) outside owned scope [10,20) [30,40)"},
		{"between", []edit.Edit{{Start: 11, End: 12}, {Start: 25, End: 25, New: "x"}}, "edit at [25,25)"},
		{"straddles", []edit.Edit{{Start: 15, End: 35}}, "edit at [15,35)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := edit.CheckScope(tt.edits, scopes)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("CheckScope: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CheckScope error = %v, want containing %q", err, tt.wantErr)
			}
		})
	}
}

// editsFrom derives up to len(data)/3 edits for a source of n bytes from
// fuzz data, three bytes per edit: start, length (or insertion), text.
func editsFrom(n int, data []byte) []edit.Edit {
	var edits []edit.Edit
	for i := 0; i+2 < len(data) && len(edits) < 8; i += 3 {
		start := int(data[i]) % (n + 2) // may be out of range
		length := int(data[i+1]%8) - 1  // -1 makes an invalid reversed edit
		end := start + length
		if data[i+1]%8 == 0 {
			end = start - 1
		}
		if data[i+1]%5 == 0 {
			end = start
		}
		edits = append(edits, edit.Edit{Start: start, End: end, New: strings.Repeat(string(rune('A'+data[i+2]%26)), int(data[i+2]%3))})
	}
	return edits
}

// naive applies edits by sorting them by hand and splicing, checking
// validity independently of edit.Apply.
func naive(src string, edits []edit.Edit) (string, bool) {
	idx := make([]int, len(edits))
	for i := range idx {
		idx[i] = i
	}
	// Insertion sort keyed on (Start, End), stable.
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0; j-- {
			a, b := edits[idx[j-1]], edits[idx[j]]
			if a.Start > b.Start || (a.Start == b.Start && a.End > b.End) {
				idx[j-1], idx[j] = idx[j], idx[j-1]
			}
		}
	}
	var sb strings.Builder
	pos := 0
	for _, i := range idx {
		e := edits[i]
		if e.Start < pos || e.End < e.Start || e.End > len(src) {
			return "", false
		}
		sb.WriteString(src[pos:e.Start])
		sb.WriteString(e.New)
		pos = e.End
	}
	sb.WriteString(src[pos:])
	return sb.String(), true
}

func FuzzApply(f *testing.F) {
	for _, tc := range edittest.TestCases {
		var data []byte
		for _, e := range tc.Edits {
			data = append(data, byte(e.Start), byte(e.End-e.Start+1), byte(len(e.New)))
		}
		f.Add(tc.In, data)
	}
	f.Fuzz(func(t *testing.T, src string, data []byte) {
		edits := editsFrom(len(src), data)
		want, ok := naive(src, edits)
		got, err := edit.Apply([]byte(src), edits)
		if !ok {
			if err == nil {
				t.Fatalf("Apply(%q, %v) = %q, want error", src, edits, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("Apply(%q, %v): %v", src, edits, err)
		}
		if string(got) != want {
			t.Fatalf("Apply(%q, %v) = %q, want %q", src, edits, got, want)
		}
	})
}

func TestMergeRandom(t *testing.T) {
	// Merging two random valid sets either conflicts or applies to the same
	// text as applying the union in either order of sets.
	r := rand.New(rand.NewPCG(1, 2))
	src := []byte(strings.Repeat("abcdefghij", 4))
	randSet := func() []edit.Edit {
		var s []edit.Edit
		pos := 0
		for pos < len(src) && len(s) < 3 {
			start := pos + r.IntN(10)
			end := start + r.IntN(4)
			if end > len(src) {
				break
			}
			s = append(s, edit.Edit{Start: start, End: end, New: string(rune('A' + r.IntN(26)))})
			pos = end + 1
		}
		return s
	}
	for range 500 {
		x, y := randSet(), randSet()
		m1, err1 := edit.Merge(x, y)
		m2, err2 := edit.Merge(y, x)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("Merge(%v,%v) err %v but reversed err %v", x, y, err1, err2)
		}
		if err1 != nil {
			var ce *edit.ConflictError
			if !errors.As(err1, &ce) {
				t.Fatalf("Merge(%v,%v) = %v, want *ConflictError", x, y, err1)
			}
			continue
		}
		a, err := edit.Apply(src, m1)
		if err != nil {
			t.Fatalf("Apply(Merge(%v,%v)): %v", x, y, err)
		}
		b, err := edit.Apply(src, m2)
		if err != nil {
			t.Fatalf("Apply(Merge(%v,%v)): %v", y, x, err)
		}
		if string(a) != string(b) {
			t.Fatalf("merge not symmetric: %q vs %q", a, b)
		}
	}
}
