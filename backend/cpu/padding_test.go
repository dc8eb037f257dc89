package cpu

import (
	"strings"
	"testing"
)

func TestPaddingTable(t *testing.T) {
	tu := "#include <metal_stdlib>\nstruct S { half m; float d; };\ntypedef S mtl_tg0_t[64];\n" +
		"static const mtl_rt::TGSlot mtl_slots[] = {\n" +
		"  {0, sizeof(::mtl_tg0_t), alignof(::mtl_tg0_t), \"shared\", sizeof(std::remove_all_extents<::mtl_tg0_t>::type), 1, {}},\n" +
		"  {2, sizeof(::ns::mtl_tg2_t<float, 4>), alignof(::ns::mtl_tg2_t<float, 4>), \"t\", 0, 0, {}},\n" +
		"};\n" +
		"static const mtl_rt::TGSlot mtl_slots2[] = {\n" +
		"  {0, sizeof(::mtl_tg0_t), alignof(::mtl_tg0_t), \"shared\", 0, 0, {}},\n" +
		"  {3, sizeof(::mtl_tg3_t<half>), alignof(::mtl_tg3_t<half>), \"u\", 0, 0, {}},\n" +
		"  {3, sizeof(::mtl_tg3_t<float>), alignof(::mtl_tg3_t<float>), \"u\", 0, 0, {}},\n" +
		"};\n"
	got := string(paddingTable([]byte(tu)))
	for _, want := range []string{
		`extern "C" const unsigned char* mtl_tg_padding(int slot, size_t* elem)`,
		"  case 0: return ::mtl_pad::mask<::mtl_tg0_t>(elem);\n",
		"  case 2: return ::mtl_pad::mask<::ns::mtl_tg2_t<float, 4>>(elem);\n",
		"__builtin_clear_padding",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("padding table lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "case 0:") != 1 || strings.Contains(got, "case 3:") {
		t.Errorf("a slot is listed twice, or one of two types:\n%s", got)
	}
	if paddingTable([]byte("// hand-written TU\n"+tu)) != nil {
		t.Error("a TU that does not include the prelude got a padding table")
	}
	if paddingTable([]byte("#include <metal_stdlib>\nkernel\n")) != nil {
		t.Error("a TU without threadgroup declarations got a padding table")
	}
}
