package cmdutil

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.metal")
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(a, filepath.Join(dir, "link.metal")); err != nil {
		t.Skip("symlinks unsupported here:", err)
	}
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{a, a, true},
		{a, filepath.Join(dir, ".", "a.metal"), true},
		{a, filepath.Join(dir, "link.metal"), true},
		{a, filepath.Join(dir, "b.metal"), false},
		{filepath.Join(dir, "x"), filepath.Join(dir, "sub", "..", "x"), true},
	} {
		if got := SameFile(tt.a, tt.b); got != tt.want {
			t.Errorf("SameFile(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestParseDefines(t *testing.T) {
	got, err := ParseDefines([]string{"N=4", "FLAG", "E="})
	if err != nil {
		t.Fatal(err)
	}
	if got["N"] != "4" || got["FLAG"] != "1" || got["E"] != "" || len(got) != 3 {
		t.Errorf("ParseDefines = %v", got)
	}
	for _, bad := range []string{"=1", "4N=1", "A-B=2"} {
		if _, err := ParseDefines([]string{bad}); err == nil || !strings.Contains(err.Error(), "bad -D") {
			t.Errorf("ParseDefines(%q) error = %v", bad, err)
		}
	}
}

func TestCheckMacros(t *testing.T) {
	tests := []struct {
		defines, undefs []string
		wantErr         string
	}{
		{defines: []string{"N=4", "FAST"}, undefs: []string{"HAS_BF16"}},
		{defines: []string{"=4"}, wantErr: `bad -D "=4"`},
		{undefs: []string{"HAS-BF16"}, wantErr: `bad -U "HAS-BF16"`},
		{undefs: []string{""}, wantErr: `bad -U ""`},
	}
	for _, tt := range tests {
		err := CheckMacros(tt.defines, tt.undefs)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("CheckMacros(%q, %q) = %v", tt.defines, tt.undefs, err)
			}
			continue
		}
		var fe *FlagError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("CheckMacros(%q, %q) = %v, want a FlagError containing %q", tt.defines, tt.undefs, err, tt.wantErr)
		}
	}
}
