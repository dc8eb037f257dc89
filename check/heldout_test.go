package check_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/check"
	"metalab/spec"
)

// TestHeldOutPlanted checks the planted variants of
// kernels/examples/heldout: each is right on every listed case, so it
// passes without held-out cases, and fails with them, with a shrunk case
// smaller than the one drawn and a replay token that fails again.
func TestHeldOutPlanted(t *testing.T) {
	b := cpuBackend(t)
	dir := filepath.Join("..", "kernels", "examples", "heldout")
	s, err := spec.Load(filepath.Join(dir, "wrapsum.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var vs []check.Variant
	for _, name := range []string{"mult32", "branch", "mask"} {
		path := filepath.Join(dir, "variants", name+".metal")
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, check.Variant{Name: name, Path: path, Text: text})
	}
	ctx := context.Background()
	off, err := check.Run(ctx, check.Options{Spec: s, Backend: b, Variants: vs})
	if err != nil {
		t.Fatal(err)
	}
	if !off.OK() {
		t.Fatalf("without held-out cases the planted variants should pass: %+v", off.Variants)
	}
	if !strings.Contains(strings.Join(off.Notes, "\n"), "held-out cases are off") {
		t.Errorf("notes %q do not say held-out cases are off", off.Notes)
	}
	on, err := check.Run(ctx, check.Options{Spec: s, Backend: b, Variants: vs, HeldOut: 4, Seed: 1, SeedSet: true})
	if err != nil {
		t.Fatal(err)
	}
	if on.Control.Status != check.Pass {
		t.Fatalf("control: %s %s", on.Control.Status, on.Control.Msg)
	}
	for _, r := range on.Variants {
		if r.Status != check.FailParity || r.HeldOut == nil || r.HeldOut.Shrunk == nil {
			t.Errorf("%s: %s %s, held out %+v: want a fail-parity with a shrunk case", r.Name, r.Status, r.Msg, r.HeldOut)
			continue
		}
		if !strings.Contains(r.Replay, "--replay '"+r.HeldOut.Shrunk.Token+"'") {
			t.Errorf("%s: replay %q does not name the shrunk case", r.Name, r.Replay)
		}
		shrunk, err := spec.ParseToken(r.HeldOut.Shrunk.Token)
		if err != nil {
			t.Fatal(err)
		}
		var drawn int
		for _, d := range r.HeldOut.Cases {
			if d.Status != check.Pass && d.Status != "" {
				c, _ := spec.ParseToken(d.Token)
				drawn = varN(c)
			}
		}
		if varN(shrunk) >= drawn && shrunk.Name != "" && strings.Contains(shrunk.Name, "shrunk") {
			t.Errorf("%s: shrunk N=%d is not below the drawn N=%d", r.Name, varN(shrunk), drawn)
		}
		if varN(shrunk)%32 == 0 {
			t.Errorf("%s: shrunk N=%d is a listed kind of size", r.Name, varN(shrunk))
		}
		// The replay fails again, on exactly that case.
		var v check.Variant
		for _, x := range vs {
			if x.Name == r.Name {
				v = x
			}
		}
		rep, err := check.Run(ctx, check.Options{Spec: s, Backend: b, Variants: []check.Variant{v}, Replay: []spec.Case{shrunk}})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Variants[0]; got.Status != check.FailParity || rep.Cases != 1 || got.HeldOut != nil {
			t.Errorf("%s: replay gives %s on %d cases (held out %+v)", r.Name, got.Status, rep.Cases, got.HeldOut)
		}
	}
}

func varN(c spec.Case) int {
	for _, v := range c.Vars {
		if v.Name == "N" {
			n, _ := v.Value.(int)
			return n
		}
	}
	return -1
}
