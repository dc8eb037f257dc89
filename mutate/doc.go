package mutate

import "strings"

// ExtractDoc returns the package documentation comment of a doc.go file's
// source, without comment markers, so a mutation package's doc.go can
// double as its Mutation.Doc through //go:embed. It returns "" if src has
// no line comment before its package clause (Validate then rejects it).
func ExtractDoc(src string) string {
	var lines []string
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.HasPrefix(l, "package ") {
			break
		}
		if l == "" || strings.HasPrefix(l, "//go:") {
			lines = lines[:0] // only the comment block adjacent to the package clause
			continue
		}
		if !strings.HasPrefix(l, "//") {
			return ""
		}
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, "//"), " "))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
