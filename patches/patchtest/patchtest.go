// Package patchtest applies unified diffs for tests.
package patchtest

import (
	"fmt"
	"strings"

	"github.com/sourcegraph/go-diff/diff"
)

// Apply applies a one-file unified diff to base, checking each hunk's
// context and removed lines. It is an applier independent of git and of
// package patches, so tests can check a patch by a second route.
func Apply(patch string, base []byte) ([]byte, error) {
	if patch == "" {
		return base, nil
	}
	fds, err := diff.ParseMultiFileDiffOptions([]byte(patch), diff.ParseOptions{KeepCR: true})
	if err != nil {
		return nil, err
	}
	if len(fds) != 1 {
		return nil, fmt.Errorf("got %d file diffs, want 1", len(fds))
	}
	lines := SplitLines(string(base))
	var out []string
	next := 0
	for _, h := range fds[0].Hunks {
		var orig, repl []string
		body := string(h.Body)
		at := 0
		for _, l := range SplitLines(body) {
			at += len(l)
			text := l[1:]
			if l[0] == '-' && int(h.OrigNoNewlineAt) == at {
				text = strings.TrimSuffix(text, "\n")
			}
			switch l[0] {
			case ' ':
				orig, repl = append(orig, text), append(repl, text)
			case '-':
				orig = append(orig, text)
			case '+':
				repl = append(repl, text)
			default:
				return nil, fmt.Errorf("bad hunk line %q", l)
			}
		}
		start := int(h.OrigStartLine) - 1
		if h.OrigLines == 0 {
			start = int(h.OrigStartLine)
		}
		if start < next || start+len(orig) > len(lines) {
			return nil, fmt.Errorf("hunk at line %d out of place", h.OrigStartLine)
		}
		out = append(out, lines[next:start]...)
		for i, l := range orig {
			if lines[start+i] != l {
				return nil, fmt.Errorf("hunk at line %d: line %d is %q, hunk says %q", h.OrigStartLine, start+i+1, lines[start+i], l)
			}
		}
		out = append(out, repl...)
		next = start + len(orig)
	}
	out = append(out, lines[next:]...)
	return []byte(strings.Join(out, "")), nil
}

// SplitLines splits s after each '\n'; the last line may lack one.
func SplitLines(s string) []string {
	var lines []string
	for s != "" {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		lines = append(lines, s[:i])
		s = s[i:]
	}
	return lines
}
