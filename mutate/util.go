package mutate

// LineStart returns the offset of the first byte of the line holding off,
// and whether only spaces and tabs precede off on that line.
func LineStart(src []byte, off int) (start int, first bool) {
	i := off
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	if i == 0 || src[i-1] == '\n' {
		return i, true
	}
	for i > 0 && src[i-1] != '\n' {
		i--
	}
	return i, false
}

// LineEnd returns the offset just past the newline ending the line holding
// off (len(src) on the last line without one), and whether only spaces,
// tabs and a carriage return follow off on that line.
func LineEnd(src []byte, off int) (next int, last bool) {
	i := off
	for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\r') {
		i++
	}
	last = i == len(src) || src[i] == '\n'
	for i < len(src) && src[i] != '\n' {
		i++
	}
	if i < len(src) {
		i++
	}
	return i, last
}

// EOL returns the line terminator used by the line holding off: "\r\n" if
// that line ends in one, else "\n".
func EOL(src []byte, off int) string {
	for i := off; i < len(src); i++ {
		if src[i] == '\n' {
			if i > 0 && src[i-1] == '\r' {
				return "\r\n"
			}
			return "\n"
		}
	}
	return "\n"
}
