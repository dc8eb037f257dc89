package msl

import "context"

// cancelEvery is how many statements a thread's interpretation follows
// between looks at the File's context: rarely enough to cost nothing,
// often enough to stop within milliseconds.
const cancelEvery = 1 << 10

// SetContext makes the long analyses of f — footprints, and through them
// every barrier proof of the functions of f, its headers and its macro
// expansions — give up soon after ctx is done (Ctrl-C, SIGTERM). What they
// give up on is unknown ("interrupted"), so a caller that set a context
// must check it after the analyses and discard their results when it is
// done.
func (f *File) SetContext(ctx context.Context) { f.done = ctx.Done() }

// Canceled reports whether the context set on f, or on the file that
// included it or whose macro expansion it is, is done.
func (f *File) Canceled() bool {
	for g := f; g != nil; {
		if g.done != nil {
			select {
			case <-g.done:
				return true
			default:
				return false
			}
		}
		if g.parent != nil {
			g = g.parent
		} else {
			g = g.includer
		}
	}
	return false
}
