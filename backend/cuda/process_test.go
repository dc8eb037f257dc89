package cuda

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"metalab/backend"
	"metalab/backend/runner"
)

// The test binary doubles as a fake cuda runner: with
// METALAB_FAKE_CUDA_RUNNER set it speaks the protocol as the cuda runner
// does, without a GPU (see fakeCUDARunner).
func TestMain(m *testing.M) {
	if os.Getenv("METALAB_FAKE_CUDA_RUNNER") != "" {
		os.Exit(fakeCUDARunner())
	}
	os.Exit(m.Run())
}

// fakeCUDARunner answers as the cuda runner would on a GPU: its HELLO
// says a GPU is ready, it loads one kernel object in its life (refusing a
// second, as runtime/runner.cpp does), and a dispatch writes the
// process's id into the first four bytes of every device buffer read back.
func fakeCUDARunner() int {
	in := bufio.NewReader(os.Stdin)
	out := os.Stdout
	bufs := map[uint32][]byte{}
	loaded := ""
	reply := func(seq uint32, typ byte, payload []byte) {
		var h [13]byte
		binary.LittleEndian.PutUint32(h[0:], runner.ReplyMagic)
		binary.LittleEndian.PutUint32(h[4:], seq)
		binary.LittleEndian.PutUint32(h[8:], uint32(len(payload)))
		h[12] = typ
		out.Write(append(h[:], payload...))
	}
	fail := func(seq uint32, msg string) {
		var e runner.Encoder
		e.U8(runner.ErrUsage)
		e.Str(msg)
		e.U32(0)
		reply(seq, runner.MsgErr, e.B)
	}
	for {
		var h [13]byte
		if _, err := io.ReadFull(in, h[:]); err != nil {
			return 0
		}
		seq, n := binary.LittleEndian.Uint32(h[4:]), binary.LittleEndian.Uint32(h[8:])
		payload := make([]byte, n)
		if _, err := io.ReadFull(in, payload); err != nil {
			return 72
		}
		d := runner.Decoder{B: payload}
		var e runner.Encoder
		switch h[12] {
		case runner.MsgHello:
			e.Str("fake cuda runner")
			e.U8(1)
			e.Str("")
			e.Str("Fake GPU")
			for _, x := range []uint32{9, 0, 13000, 13000, 132} {
				e.U32(x)
			}
			e.U64(1 << 30)
			e.U32(1024)
			e.U64(48 << 10)
			e.U64(227 << 10)
			e.U32(1)
			e.U32(0)
			reply(seq, runner.MsgOK, e.B)
		case runner.MsgLoad:
			so, kernel := d.Str(), d.Str()
			if loaded != "" && so != loaded {
				fail(seq, "this runner already loaded "+loaded+": each kernel object runs in a runner of its own")
				continue
			}
			loaded = so
			e.U32(0)
			e.U64(0)
			e.U32(256)
			e.U32(0)
			e.Str("registers 8 for " + kernel)
			e.U64(0)
			reply(seq, runner.MsgOK, e.B)
		case runner.MsgReset:
			bufs = map[uint32][]byte{}
			reply(seq, runner.MsgOK, nil)
		case runner.MsgBuffer:
			idx, kind, size, source := d.U32(), d.U8(), d.U64(), d.U8()
			if source == runner.SourceKeep || source == runner.SourceRestore {
				d.Str()
			}
			if kind == runner.BufDevice && (source == runner.SourceData || source == runner.SourceKeep) {
				bufs[idx] = append([]byte(nil), d.B[:size]...)
			}
			reply(seq, runner.MsgOK, nil)
		case runner.MsgDispatch:
			for _, b := range bufs {
				if len(b) >= 4 {
					binary.LittleEndian.PutUint32(b, uint32(os.Getpid()))
				}
			}
			e.U32(0)
			e.U32(0)
			e.U64(1000)
			reply(seq, runner.MsgOK, e.B)
		case runner.MsgRead:
			reply(seq, runner.MsgOK, bufs[d.U32()])
		default:
			fail(seq, "unknown request")
		}
	}
}

// fakeBackend returns a Backend whose runners are fake cuda runners: its
// programs run without nvcc or a GPU.
func fakeBackend(t *testing.T) *Backend {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{})
	b.runnerPath = exe
	b.testEnv = []string{"METALAB_FAKE_CUDA_RUNNER=1"}
	t.Cleanup(func() { b.Close() })
	return b
}

// fakeProgram is what CompileCU makes of a compiled object so, loaded.
func fakeProgram(t *testing.T, b *Backend, so string) *program {
	t.Helper()
	p := b.newProgram(so, "k", so)
	b.mu.Lock()
	err := p.Load(context.Background())
	b.mu.Unlock()
	if err != nil {
		t.Fatalf("load %s: %v", so, err)
	}
	return p
}

// runnerPid runs p once and returns the runner's process id, which the
// fake runner writes into the output.
func runnerPid(t *testing.T, p *program) uint32 {
	t.Helper()
	res, err := p.Run(context.Background(), backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 16)}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 1, Y: 1, Z: 1},
		Timeout:      20 * time.Second,
	})
	if err != nil {
		t.Fatalf("run %s: %v", p.so, err)
	}
	out := res.Outputs[0]
	if len(out) < 4 {
		t.Fatalf("run %s: output %v", p.so, out)
	}
	return binary.LittleEndian.Uint32(out)
}

// TestProgramsOwnRunners: no two programs (two variants) of a cuda
// Backend share a runner process, however many there are (more than the
// live runners kept); a program keeps its runner from run to run, and
// one program's Close stops its runner only.
func TestProgramsOwnRunners(t *testing.T) {
	b := fakeBackend(t)
	var progs []*program
	for i := 0; i < maxLiveRunners+2; i++ {
		progs = append(progs, fakeProgram(t, b, "/objects/variant"+string(rune('a'+i))+".so"))
	}
	owner := map[uint32]int{}
	for round := 0; round < 2; round++ {
		for i, p := range progs {
			pid := runnerPid(t, p)
			if pid == 0 {
				t.Fatalf("program %d: no runner pid", i)
			}
			if j, ok := owner[pid]; ok && j != i {
				t.Errorf("programs %d and %d ran in one runner process (%d)", j, i, pid)
			}
			owner[pid] = i
		}
	}
	if n := b.pool.Live(); n > maxLiveRunners {
		t.Errorf("%d runners live, want at most %d", n, maxLiveRunners)
	}
	// Between runs of one program (no other program's in between) its
	// runner is the same: no CUDA context started per run.
	p := progs[0]
	first := runnerPid(t, p)
	starts := b.pool.Starts()
	for k := 0; k < 3; k++ {
		if pid := runnerPid(t, p); pid != first {
			t.Errorf("run %d of one program in runner %d, the first in %d", k, pid, first)
		}
	}
	if n := b.pool.Starts() - starts; n != 0 {
		t.Errorf("%d runners started for runs of a program that holds one", n)
	}
	q := progs[1]
	qpid := runnerPid(t, q)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if pid := runnerPid(t, q); pid != qpid {
		t.Errorf("another program's Close restarted this one's runner (%d, then %d)", qpid, pid)
	}
	if _, err := p.Run(context.Background(), backend.Dispatch{Threads: backend.Dim3{X: 1, Y: 1, Z: 1}}); err == nil {
		t.Error("a closed program ran")
	}
}

// TestGPURunnerPerProgram: on the GPU, two programs of one Backend run in
// two runner processes, while two compiles of one object and kernel share
// one program (the same machine code); and it says what a program's
// runner costs to start (a process and a CUDA context, with its HELLO) and
// to start and load again after it was stopped.
func TestGPURunnerPerProgram(t *testing.T) {
	b := gpuBackend(t, Options{})
	h1 := compileCU(t, b, "groups.cu", "reduce")
	p1 := programOf(h1)
	p2 := programOf(compileCU(t, b, "groups.cu", "positions"))
	again := compileCU(t, b, "groups.cu", "reduce")
	d := backend.Dispatch{
		Buffers:      []backend.Buffer{{Index: 0, Data: make([]byte, 4*256)}, {Index: 1, Data: make([]byte, 4), Output: true}},
		Threadgroups: backend.Dim3{X: 1, Y: 1, Z: 1},
		Threads:      backend.Dim3{X: 256, Y: 1, Z: 1},
	}
	run(t, p1, d)
	run(t, again, d)
	b.mu.Lock()
	r1, r2 := p1.Lease().Proc(), p2.Lease().Proc()
	b.mu.Unlock()
	if r1 == nil || r2 == nil || r1.Pid() == r2.Pid() {
		t.Fatalf("two programs' runners: %v and %v, want two processes", r1, r2)
	}
	if programOf(again) != p1 {
		t.Error("a second compile of one object and kernel has a program of its own")
	}
	// A hold released leaves the other's program running.
	again.Close()
	run(t, p1, d)
	if p1.Closed() {
		t.Fatal("closing one compile's hold closed the program another holds")
	}
	_ = h1
	const n = 5
	var starts, reloads, warm []time.Duration
	for i := 0; i < n; i++ {
		b.mu.Lock()
		t0 := time.Now()
		r, err := b.startRunner(context.Background())
		starts = append(starts, time.Since(t0))
		b.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	for i := 0; i < n; i++ {
		b.mu.Lock()
		p1.Lease().Drop()
		b.mu.Unlock()
		t0 := time.Now()
		run(t, p1, d)
		reloads = append(reloads, time.Since(t0))
		t0 = time.Now()
		run(t, p1, d)
		warm = append(warm, time.Since(t0))
	}
	ms := func(ds []time.Duration) string {
		var sum, lo, hi time.Duration
		for i, x := range ds {
			sum += x
			if i == 0 || x < lo {
				lo = x
			}
			if x > hi {
				hi = x
			}
		}
		return fmt.Sprintf("mean %.1f ms (min %.1f, max %.1f, n=%d)", float64(sum)/float64(len(ds))/1e6, float64(lo)/1e6, float64(hi)/1e6, len(ds))
	}
	t.Logf("runner start-up (process, CUDA context, HELLO): %s", ms(starts))
	t.Logf("a stopped program's next run (start, LOAD, first run): %s", ms(reloads))
	t.Logf("a program's run on its live runner: %s", ms(warm))
}

// programOf returns the program behind a Program this backend compiled
// (a compile's hold on a shared one, or the program itself).
func programOf(p backend.Program) *program {
	switch p := p.(type) {
	case *sharedProgram:
		return p.program
	case *program:
		return p
	}
	return nil
}
