package msl

import "strings"

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

// TemplateArgs returns the template arguments that every explicit
// instantiation of the scope's kernel template gives alike (N_READS = 4
// when each instantiation passes 4), by parameter name; nil when the
// function is not a kernel template or none is instantiated. Facts that
// use them (a loop's trip count over N_READS) hold for every
// instantiation. A helper template is left alone: a call may instantiate
// it with other arguments.
func (sc *Scope) TemplateArgs() map[string]string {
	if sc.targsDone {
		return sc.targs
	}
	sc.targsDone = true
	fn := sc.Func
	if fn.Kind != Kernel || len(fn.Template) == 0 {
		return nil
	}
	var insts []*Instantiation
	for _, in := range sc.File.Instantiations {
		if in.Func == fn.Name {
			insts = append(insts, in)
		}
	}
	if len(insts) == 0 {
		return nil
	}
	out := map[string]string{}
	for i, name := range fn.Template {
		val, same := "", true
		for k, in := range insts {
			a := ""
			switch {
			case i < len(in.Args):
				a = in.Args[i]
			case i < len(fn.TemplateDefaults):
				a = fn.TemplateDefaults[i]
			}
			if a == "" || k > 0 && a != val {
				same = false
				break
			}
			val = a
		}
		if same {
			out[name] = val
		}
	}
	if len(out) == 0 {
		return nil
	}
	sc.targs = out
	return out
}

// BindsIn returns the template parameters TemplateArgs binds that the
// source range [pos, end) names, as "N_READS=4,M=2" in the order they are
// named, or "": what a site resting on them hashes into its id.
func (sc *Scope) BindsIn(pos, end int) string {
	var parts []string
	for _, b := range sc.boundIn(pos, end) {
		parts = append(parts, b[0]+"="+strings.Join(strings.Fields(b[1]), ""))
	}
	return strings.Join(parts, ",")
}

// BoundIn describes the template parameters TemplateArgs binds that the
// source range [pos, end) names, for messages: "N_READS = 4 in every
// instantiation", or "".
func (sc *Scope) BoundIn(pos, end int) string {
	var parts []string
	for _, b := range sc.boundIn(pos, end) {
		parts = append(parts, b[0]+" = "+b[1])
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + " in every instantiation"
}

// boundIn lists the template parameters TemplateArgs binds that [pos,
// end) names, each once, as (name, argument text) in the order named.
func (sc *Scope) boundIn(pos, end int) [][2]string {
	ta := sc.TemplateArgs()
	if len(ta) == 0 {
		return nil
	}
	var out [][2]string
	seen := map[string]bool{}
	for _, t := range sc.File.SigTokens(pos, end) {
		if a, ok := ta[t.Text]; ok && t.Kind == Ident && !seen[t.Text] {
			seen[t.Text] = true
			out = append(out, [2]string{t.Text, a})
		}
	}
	return out
}
