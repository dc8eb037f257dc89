package check

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"metalab/backend"
	"metalab/backend/fake"
	"metalab/internal/cli/cmdutil"
	"metalab/internal/cli/cmdutil/cmdtest"
)

// A gpuDouble is the fake backend without a checking mode, named gpu, as a
// GPU backend is; a down one is not available here.
type gpuDouble struct {
	*fake.Backend
	name string
	down string
}

func (b *gpuDouble) Name() string { return b.name }

func (b *gpuDouble) Available(context.Context) (bool, string) { return b.down == "", b.down }

func (b *gpuDouble) Info(ctx context.Context) backend.Info {
	i := b.Backend.Info(ctx)
	i.Name = b.name
	i.Check = b.name == "fake"
	return i
}

func TestVerifyFlags(t *testing.T) {
	got := cmdtest.ParseArgs(t, NewCmdCheck, strings.Fields("k.yaml --backend cuda --verify-backend cpu --verify-cases quick,edge --strict-baseline --no-verify"), "")
	if got.VerifyBackend != "cpu" || strings.Join(got.VerifyCases, ",") != "quick,edge" || !got.StrictBaseline || !got.NoVerify {
		t.Errorf("options = %+v", *got)
	}
}

// TestVerifyBackendRun: on a backend without a checking mode the check
// verifies on the verification backend (cpu by default, here a double) and
// confirms on the backend; --no-verify says "not verified"; a verification
// backend that cannot run here is an environment error (exit 3) before
// any work, and --verify-backend with --no-verify is a usage error.
func TestVerifyBackendRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		return p
	}
	specPath := write("k.yaml", testSpec)
	write("k.metal", "// fake: copy 0 1\n")
	good := write("good.metal", "// fake: copy 0 1\n// unrolled\n")
	var made []string
	var gpu *gpuDouble
	mk := func(down string) func(string) (backend.Backend, error) {
		return func(name string) (backend.Backend, error) {
			made = append(made, name)
			switch name {
			case "gpu":
				gpu = &gpuDouble{Backend: fake.New(), name: "gpu"}
				return gpu, nil
			case "cpu":
				return &gpuDouble{Backend: fake.New(), name: "fake", down: down}, nil
			}
			return nil, cmdutil.FlagErrorf("unknown --backend %q", name)
		}
	}
	tests := []struct {
		name    string
		opts    CheckOptions
		down    string
		wantErr string
		env     bool
		wantOut []string
	}{
		{name: "verified on cpu", opts: CheckOptions{},
			wantOut: []string{"verified on fake in the checking mode at 1 cases of sets quick; confirmed on gpu in the plain build", "good "}},
		{name: "not verified", opts: CheckOptions{NoVerify: true},
			wantOut: []string{"not verified; confirmed on gpu", "not verified"}},
		{name: "verification backend down", down: "no C++ compiler (set CXX)", env: true,
			wantErr: "verification backend fake is not available (variants on gpu are verified there; --no-verify confirms them by their bytes only): no C++ compiler"},
		{name: "no checking mode", opts: CheckOptions{VerifyBackend: "gpu"}, wantErr: "--verify-backend gpu: the gpu backend has no checking mode"},
		{name: "both", opts: CheckOptions{VerifyBackend: "cpu", NoVerify: true}, wantErr: "--verify-backend cpu and --no-verify: choose one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			made = nil
			ios, _, out, _ := cmdutil.Test()
			o := tt.opts
			o.IO, o.ReadFile, o.NewBackend = ios, os.ReadFile, mk(tt.down)
			o.Spec, o.Variants, o.Backend, o.TGLimit = specPath, []string{good}, "gpu", 16384
			err := checkRun(context.Background(), &o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				var env *backend.EnvError
				if tt.env != errors.As(err, &env) {
					t.Errorf("error %v: an environment error (exit 3) %v, want %v", err, !tt.env, tt.env)
				}
				if gpu != nil && gpu.Compiles() != 0 {
					t.Errorf("%d compiles before the error", gpu.Compiles())
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v\n%s", err, out)
			}
			for _, s := range tt.wantOut {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
		})
	}
}
