package spec
import ("testing"; "os")
func TestScratchSpec(t *testing.T) {
	for _, p := range []string{"../kernels/examples/ggml/ggml-ops.yaml"} {
		s, err := Load(p)
		if err != nil { t.Fatal(err) }
		cs, err := s.Cases()
		if err != nil { t.Fatal(err) }
		for _, c := range cs {
			in, err := s.Instantiate(c)
			if err != nil { t.Fatal(err) }
			if err := in.CheckKernels(os.ReadFile); err != nil { t.Error(err) }
		}
	}
}
