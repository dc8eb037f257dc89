package measure

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
)

// TestBenchfmtRoundTrip writes a result and reads it back with benchfmt's
// own Reader, the one benchstat uses.
func TestBenchfmtRoundTrip(t *testing.T) {
	log := new([]string)
	a := seriesFake("A", log, tightA)
	b := seriesFake("B", log, scaled(tightB, 0.96))
	r, err := Paired(context.Background(), a.sample, b.sample, Options{
		Label:      "cpu emulator time: exercises the loop,\nnot a GPU claim",
		Dispatches: 3,
		B:          "unroll-pragma.qsa_flash.3=full-12345678",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := Analyze(pairsOf(t, tightA, tightB), ClockGPU, Options{B: "baseline"})
	if err != nil {
		t.Fatal(err)
	}
	ctl.Control = true
	var buf bytes.Buffer
	if err := WriteBenchfmt(&buf, "BenchmarkQsaFlash/pos0=8192", r); err != nil {
		t.Fatal(err)
	}
	if err := WriteBenchfmt(&buf, "QsaFlash/pos0=8192/control", ctl); err != nil {
		t.Fatal(err)
	}
	t.Logf("written:\n%s", buf.String())

	type line struct {
		name string
		ns   float64
		cfg  map[string]string
	}
	var got []line
	rd := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "measure.txt")
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("syntax error: %v", rec)
		case *benchfmt.Result:
			ns, ok := rec.Value("sec/op")
			if !ok || rec.Iters != 1 {
				t.Fatalf("%s: iters %d, sec/op %v %v", rec.Name, rec.Iters, ns, ok)
			}
			cfg := map[string]string{}
			for _, c := range rec.Config {
				cfg[c.Key] = string(c.Value)
			}
			got = append(got, line{rec.Name.String(), ns * 1e9, cfg})
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	var want []line
	for _, p := range r.Pairs() {
		want = append(want, line{name: "QsaFlash/pos0=8192/side=baseline", ns: float64(p.A)}, line{name: "QsaFlash/pos0=8192/side=variant", ns: float64(p.B)})
	}
	for _, p := range ctl.Pairs() {
		want = append(want, line{name: "QsaFlash/pos0=8192/control/side=baseline", ns: float64(p.A)}, line{name: "QsaFlash/pos0=8192/control/side=control", ns: float64(p.B)})
	}
	if len(got) != len(want) {
		t.Fatalf("read %d results, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].name != want[i].name || got[i].ns < want[i].ns-0.5 || got[i].ns > want[i].ns+0.5 {
			t.Errorf("result %d = %s %v ns, want %s %v ns", i, got[i].name, got[i].ns, want[i].name, want[i].ns)
		}
	}
	first := got[0].cfg
	for k, v := range map[string]string{
		"label":        "cpu emulator time: exercises the loop, not a GPU claim",
		"clock":        "gpu",
		"dispatches":   "3",
		"baseline":     "baseline",
		"variant":      "unroll-pragma.qsa_flash.3=full-12345678",
		"contaminated": "false",
	} {
		if first[k] != v {
			t.Errorf("config %s = %q, want %q", k, first[k], v)
		}
	}
	last := got[len(got)-1].cfg
	_, variant := last["variant"]
	_, label := last["label"]
	_, dispatches := last["dispatches"]
	if variant || label || dispatches || last["control"] != "baseline" {
		t.Errorf("the control's config %v still carries the variant's", last)
	}
}

func TestBenchfmtErrors(t *testing.T) {
	r, err := Analyze(pairsOf(t, tightA, tightB), ClockGPU, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "Benchmark", "Qsa Flash"} {
		if err := WriteBenchfmt(new(bytes.Buffer), name, r); err == nil {
			t.Errorf("name %q: no error", name)
		}
	}
	if err := WriteBenchfmt(new(bytes.Buffer), "X", nil); err == nil {
		t.Error("nil result: no error")
	}
}

func TestWriteText(t *testing.T) {
	r, err := Analyze(pairsOf(t, seedShiftA, seedShiftB), ClockGPU, Options{Label: "gpu time of 3 dispatches", Dispatches: 3})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"paired baseline vs variant: 66.310 ms → 63.840 ms",
		"9 pairs of 3 dispatches, gpu clock",
		"timing: gpu time of 3 dispatches",
		"CONTAMINATED",
		"shift: pairs 7–8",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}
