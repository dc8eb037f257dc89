// Package patches produces, checks and scopes the unified diffs metalab
// hands back to users. It is the only producer of unified-diff text in the
// product: line diffs come from sergi/go-diff, hunks are built as
// sourcegraph/go-diff FileDiff and Hunk values and printed by it, so the
// output can be parsed back by the same library and applied by git.
package patches

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/sourcegraph/go-diff/diff"

	"metalab/msl"
)

// ContextLines is the number of unchanged lines shown around each change;
// changes separated by at most twice this many lines share one hunk.
const ContextLines = 3

// An op is one line of a line diff: ' ' kept, '-' removed, '+' added.
// Text includes the line terminator, if any.
type op struct {
	kind byte
	text string
}

// lineDiff returns the line-by-line difference between a and b, with the
// removed lines of each change block before its added lines.
func lineDiff(a, b string) []op {
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // deterministic, minimal results
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var ops, dels, inss []op
	flush := func() {
		ops = append(ops, dels...)
		ops = append(ops, inss...)
		dels, inss = dels[:0], inss[:0]
	}
	for _, d := range diffs {
		for _, l := range splitLines(d.Text) {
			switch d.Type {
			case diffmatchpatch.DiffEqual:
				flush()
				ops = append(ops, op{' ', l})
			case diffmatchpatch.DiffDelete:
				dels = append(dels, op{'-', l})
			case diffmatchpatch.DiffInsert:
				inss = append(inss, op{'+', l})
			}
		}
	}
	flush()
	return ops
}

// splitLines splits s after each '\n'; the last line may lack one.
func splitLines(s string) []string {
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

// Unified returns a git-style unified diff that turns base into variant for
// the file at path (slash-separated, relative to the repository root), with
// ContextLines lines of context and no timestamps, or "" if they are equal.
// Missing final newlines on either side are marked as git and diff mark them.
func Unified(path string, base, variant []byte) (string, error) {
	if bytes.Equal(base, variant) {
		return "", nil
	}
	if path == "" || strings.ContainsAny(path, " \t\n\r") {
		return "", fmt.Errorf("unified diff: bad path %q (want a relative path without spaces)", path)
	}
	ops := lineDiff(string(base), string(variant))
	// origAt[i] and newAt[i] count the base and variant lines before ops[i].
	origAt := make([]int, len(ops)+1)
	newAt := make([]int, len(ops)+1)
	for i, o := range ops {
		origAt[i+1], newAt[i+1] = origAt[i], newAt[i]
		if o.kind != '+' {
			origAt[i+1]++
		}
		if o.kind != '-' {
			newAt[i+1]++
		}
	}
	var hunks []*diff.Hunk
	n := len(ops)
	for i := 0; ; {
		for i < n && ops[i].kind == ' ' {
			i++
		}
		if i == n {
			break
		}
		start := max(i-ContextLines, 0)
		end := n
		for j := i; ; {
			for j < n && ops[j].kind != ' ' {
				j++
			}
			k := j
			for k < n && ops[k].kind == ' ' {
				k++
			}
			if k == n || k-j > 2*ContextLines {
				end = min(j+ContextLines, n)
				break
			}
			j = k
		}
		hunks = append(hunks, hunk(ops[start:end], origAt[start], newAt[start], origAt[end]-origAt[start], newAt[end]-newAt[start]))
		i = end
	}
	fd := &diff.FileDiff{
		OrigName: "a/" + path,
		NewName:  "b/" + path,
		Extended: []string{fmt.Sprintf("diff --git a/%s b/%s", path, path)},
		Hunks:    hunks,
	}
	out, err := diff.PrintMultiFileDiff([]*diff.FileDiff{fd})
	if err != nil {
		return "", fmt.Errorf("print diff of %s: %w", path, err)
	}
	return string(out), nil
}

// hunk builds one hunk from ops; before and newBefore count the lines of
// each side that precede it, and origLines, newLines the lines it spans.
func hunk(ops []op, before, newBefore, origLines, newLines int) *diff.Hunk {
	h := &diff.Hunk{
		OrigStartLine: int32(startLine(before, origLines)),
		OrigLines:     int32(origLines),
		NewStartLine:  int32(startLine(newBefore, newLines)),
		NewLines:      int32(newLines),
	}
	var body []byte
	for i, o := range ops {
		body = append(body, o.kind)
		body = append(body, o.text...)
		if strings.HasSuffix(o.text, "\n") || i == len(ops)-1 {
			// A last body line without a newline is marked by the printer.
			continue
		}
		// Only the base's last line can lack a newline before other body
		// lines (the additions that replace it follow it).
		body = append(body, '\n')
		h.OrigNoNewlineAt = int32(len(body))
	}
	h.Body = body
	return h
}

// startLine is the 1-based first line of a hunk side with count lines after
// before lines, or, for an empty side, the line after which it sits.
func startLine(before, count int) int {
	if count == 0 {
		return before
	}
	return before + 1
}

// Sum returns the hex sha256 of b.
func Sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Verify checks that patch applies cleanly with git to the file at path
// whose content is base, and that applying it yields exactly variant. It
// always applies the patch with `git apply` in a temporary git repository
// holding base at path and compares the result byte for byte, so a patch
// printed wrong cannot pass. With a repository directory, the file at path
// there must also still have base's sha256 (else the baseline is stale)
// and `git apply --check` must pass in that directory, which must be the
// repository's top level.
func Verify(ctx context.Context, patch string, path string, base, variant []byte, repoDir string) error {
	if patch == "" {
		return errors.New("verify patch: empty patch")
	}
	if !filepath.IsLocal(filepath.FromSlash(path)) {
		return fmt.Errorf("verify patch: path %q is not a relative path inside the repository", path)
	}
	if repoDir != "" {
		cur, err := os.ReadFile(filepath.Join(repoDir, filepath.FromSlash(path)))
		if err != nil {
			return fmt.Errorf("verify patch: %w", err)
		}
		if got, want := Sum(cur), Sum(base); got != want {
			return fmt.Errorf("stale baseline: %s has sha256 %s, patch was made against %s", path, got, want)
		}
		if err := git(ctx, repoDir, patch, "apply", "--check", "--verbose", "-"); err != nil {
			return fmt.Errorf("verify patch for %s: %w", path, err)
		}
	}
	return roundTrip(ctx, patch, path, base, variant)
}

// roundTrip applies patch with git to base at path in a temporary
// repository and checks that the result is variant.
func roundTrip(ctx context.Context, patch string, path string, base, variant []byte) error {
	tmp, err := os.MkdirTemp("", "metalab-verify-")
	if err != nil {
		return fmt.Errorf("verify patch: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := git(ctx, tmp, "", "init", "-q"); err != nil {
		return fmt.Errorf("verify patch: %w", err)
	}
	// Line endings stay as they are, whatever the user's git config says.
	if err := git(ctx, tmp, "", "config", "core.autocrlf", "false"); err != nil {
		return fmt.Errorf("verify patch: %w", err)
	}
	full := filepath.Join(tmp, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("verify patch: %w", err)
	}
	if err := os.WriteFile(full, base, 0o644); err != nil {
		return fmt.Errorf("verify patch: %w", err)
	}
	if err := git(ctx, tmp, patch, "apply", "--check", "--verbose", "-"); err != nil {
		return fmt.Errorf("verify patch for %s: %w", path, err)
	}
	if err := git(ctx, tmp, patch, "apply", "-"); err != nil {
		return fmt.Errorf("verify patch for %s: %w", path, err)
	}
	got, err := os.ReadFile(full)
	if err != nil {
		return fmt.Errorf("verify patch: %w", err)
	}
	if !bytes.Equal(got, variant) {
		return fmt.Errorf("verify patch for %s: git apply gives %d bytes (sha256 %s), not the variant's %d bytes (sha256 %s)", path, len(got), Sum(got), len(variant), Sum(variant))
	}
	return nil
}

// git runs git with args in dir, feeding stdin, and fails if git fails or
// skips the patch (as it does for paths outside the current directory).
func git(ctx context.Context, dir, stdin string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	msg := strings.TrimSpace(out.String())
	if err != nil {
		return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	if strings.Contains(msg, "Skipped patch") {
		return fmt.Errorf("git %s skipped the patch (is %s the repository top level?): %s", strings.Join(args, " "), dir, msg)
	}
	return nil
}

// CheckFuncScope reports an error if turning base into variant changes
// anything outside the functions of f named in fns (f must be parsed from
// base). Changed lines are narrowed to the bytes that differ before
// checking, and the error names the first offending base line.
func CheckFuncScope(base, variant []byte, f *msl.File, fns []string) error {
	var spans [][2]int
	for _, name := range fns {
		found := false
		for _, fn := range f.Funcs {
			if fn.Name == name && fn.Body != nil {
				spans = append(spans, [2]int{fn.Pos, fn.End})
				found = true
			}
		}
		if !found {
			return fmt.Errorf("scope: no function %q with a body in %s", name, f.Name)
		}
	}
	ops := lineDiff(string(base), string(variant))
	off := 0 // byte offset in base of the current op
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			off += len(ops[i].text)
			i++
			continue
		}
		var oldText, newText strings.Builder
		start := off
		for ; i < len(ops) && ops[i].kind != ' '; i++ {
			if ops[i].kind == '-' {
				oldText.WriteString(ops[i].text)
				off += len(ops[i].text)
			} else {
				newText.WriteString(ops[i].text)
			}
		}
		o, n := oldText.String(), newText.String()
		p := commonPrefix(o, n)
		s := commonSuffix(o[p:], n[p:])
		lo, hi := start+p, start+len(o)-s
		inside := false
		for _, sp := range spans {
			if lo == hi && sp[0] < lo && lo <= sp[1] || lo < hi && sp[0] <= lo && hi <= sp[1] {
				inside = true
			}
		}
		if !inside {
			pos := f.Position(min(lo, len(base)))
			return fmt.Errorf("%s:%d: change outside %s", pos.Filename, pos.Line, strings.Join(fns, ", "))
		}
	}
	return nil
}

func commonPrefix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// A Patch is a verified unified diff from a baseline to a variant.
type Patch struct {
	Path          string // the file's path in its repository (the diff's a/ and b/ labels)
	Text          string // the unified diff; "" when base and variant are equal
	BaseSHA256    string
	VariantSHA256 string
	// Verified says where `git apply --check` accepted it: "repo" (the
	// repository given, whose file has the baseline's sha256) or "scratch"
	// (a scratch repository holding the baseline).
	Verified string
}

// MakeOptions say how to make a patch.
type MakeOptions struct {
	Path string    // the file's path in its repository
	File *msl.File // the baseline parsed, for the scope check; nil skips it
	Fns  []string  // the owned functions: a change outside them is refused; none skips the check
	Repo string    // a repository to verify against, or "" for a scratch one
}

// Make turns a baseline and a variant into a verified patch, in one call:
// the unified diff, the scope check (only the owned functions change), then
// `git apply --check` against the repository (refused if its file no longer
// has the baseline's sha256) or a scratch one, and a byte-for-byte round
// trip. A refusal is an error saying why; equal texts give an empty Text.
func Make(ctx context.Context, base, variant []byte, opts MakeOptions) (*Patch, error) {
	p := &Patch{Path: opts.Path, BaseSHA256: Sum(base), VariantSHA256: Sum(variant)}
	text, err := Unified(opts.Path, base, variant)
	if err != nil {
		return nil, err
	}
	if text == "" {
		return p, nil
	}
	if opts.File != nil && len(opts.Fns) > 0 {
		if err := CheckFuncScope(base, variant, opts.File, opts.Fns); err != nil {
			return nil, fmt.Errorf("refusing patch: %w", err)
		}
	}
	if err := Verify(ctx, text, opts.Path, base, variant, opts.Repo); err != nil {
		return nil, fmt.Errorf("refusing patch: %w", err)
	}
	p.Text = text
	p.Verified = "scratch"
	if opts.Repo != "" {
		p.Verified = "repo"
	}
	return p, nil
}
