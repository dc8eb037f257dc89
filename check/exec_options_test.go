package check

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/spec"
)

// recorder is a Program that records what each dispatch bound and
// answers every buffer not discarded with its bytes plus one.
type recorder struct {
	entry string
	log   *[]string
}

func (r *recorder) ThreadgroupMemory() int        { return 0 }
func (r *recorder) MaxThreadsPerThreadgroup() int { return 1024 }
func (r *recorder) Close() error                  { return nil }

func (r *recorder) Run(_ context.Context, d backend.Dispatch) (*backend.Result, error) {
	res := &backend.Result{Outputs: map[int][]byte{}}
	var parts []string
	for _, b := range d.Buffers {
		parts = append(parts, fmt.Sprintf("%d:key=%s,discard=%v", b.Index, b.Key, b.Discard))
		if !b.Discard {
			out := make([]byte, len(b.Data))
			for i, x := range b.Data {
				out[i] = x + 1
			}
			res.Outputs[b.Index] = out
		}
	}
	*r.log = append(*r.log, fmt.Sprintf("%s x%d %s", r.entry, d.Repeat, strings.Join(parts, " ")))
	return res, nil
}

// pipeline is a three-stage instance: s0 writes a, s1 reads a and writes
// b, s2 reads b and writes c.
func pipeline(log *[]string) (*spec.Instance, []backend.Program) {
	in := &spec.Instance{ID: 7}
	for _, name := range []string{"a", "b", "c"} {
		in.Buffers = append(in.Buffers, &spec.Buffer{Name: name, Role: spec.InOut, Data: []byte{10}})
	}
	var progs []backend.Program
	for i, bufs := range [][]string{{"a"}, {"a", "b"}, {"b", "c"}} {
		st := &spec.Stage{Entry: fmt.Sprintf("s%d", i), Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1}, Threads: backend.Dim3{X: 1, Y: 1, Z: 1}}
		for j, b := range bufs {
			st.Bindings = append(st.Bindings, spec.Binding{Index: j, Buffer: b})
		}
		in.Stages = append(in.Stages, st)
		progs = append(progs, &recorder{entry: st.Entry, log: log})
	}
	return in, progs
}

// TestExecuteCaseKeys: buffers bound with the bytes they started with
// carry a key (the instance's, or the State's), the outputs of an earlier
// stage none; the outputs returned are copies.
func TestExecuteCaseKeys(t *testing.T) {
	var log []string
	in, progs := pipeline(&log)
	ex, err := ExecuteCase(context.Background(), progs, in, ExecOptions{Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"s0 x2 0:key=case7/a,discard=false",
		"s1 x2 0:key=,discard=false 1:key=case7/b,discard=false",
		"s2 x2 0:key=,discard=false 1:key=case7/c,discard=false",
	}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("dispatches:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	if fmt.Sprint(ex.Outputs) != "map[a:[12] b:[12] c:[11]]" {
		t.Errorf("outputs %v", ex.Outputs)
	}
	ex.Outputs["c"][0] = 99
	if in.Buffers[2].Data[0] != 10 {
		t.Errorf("the instance's bytes changed with the outputs")
	}
}

// TestExecuteCaseSample runs a timing sample as a sweep does: from stage
// 1 on a given state, stage 1 untimed (once), stage 2 timed (Repeat),
// nothing read back that no later stage reads, no outputs.
func TestExecuteCaseSample(t *testing.T) {
	var log []string
	in, progs := pipeline(&log)
	state := map[string][]byte{"a": {50}}
	ex, err := ExecuteCase(context.Background(), progs, in, ExecOptions{Repeat: 4, From: 1, State: state, StateKey: "s9",
		Timed: []bool{false, false, true}, Discard: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"s1 x1 0:key=s9/a,discard=true 1:key=case7/b,discard=false",
		"s2 x4 0:key=,discard=true 1:key=case7/c,discard=true",
	}
	if strings.Join(log, "\n") != strings.Join(want, "\n") {
		t.Errorf("dispatches:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	if ex.Outputs != nil || len(ex.Stages) != 2 || ex.Stages[0].Stage != 1 || ex.Stages[1].Stage != 2 {
		t.Errorf("outputs %v, stages %+v", ex.Outputs, ex.Stages)
	}
	if state["a"][0] != 50 {
		t.Errorf("the state's bytes changed")
	}
}
