package msl

// localTypes returns the names that are types inside fn only: its type
// template parameters (typename T, class U) and the aliases its body
// declares. A value template parameter (int N) is not one.
func (f *File) localTypes(fn *Func) map[string]bool {
	if fn == nil {
		return nil
	}
	var out map[string]bool
	add := func(n string) {
		if out == nil {
			out = map[string]bool{}
		}
		out[n] = true
	}
	if len(fn.Template) > 0 {
		toks := f.SigTokens(fn.Pos, fn.NamePos)
		for i := 0; i+1 < len(toks); i++ {
			if (toks[i].Text == "typename" || toks[i].Text == "class") && toks[i+1].Kind == Ident {
				for _, t := range fn.Template {
					if t == toks[i+1].Text {
						add(t)
					}
				}
			}
		}
	}
	for n := range fn.Types {
		add(n)
	}
	return out
}

// funcAt returns the function whose definition holds offset pos, or nil.
func (f *File) funcAt(pos int) *Func {
	for _, fn := range f.Funcs {
		if fn.Body != nil && fn.Pos <= pos && pos < fn.End {
			return fn
		}
	}
	return nil
}
