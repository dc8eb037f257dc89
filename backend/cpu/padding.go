package cpu

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
)

// The padding table. A struct copied whole through threadgroup memory
// (MLX's and candle's MD<half>: a half, two bytes of padding, a float) is
// read whole, padding included, though its members were written one by
// one: the padding bytes were never written, and hold no value. The
// checking mode must not call their read an uninitialised read, while an
// unwritten member still is one. The runner cannot tell padding from a
// member by an access's address and size alone, so the checking build of a
// translated TU gets a function that says, for each static threadgroup
// declaration of its slot tables, which bytes of its element type are
// padding: mtl_tg_padding(slot, &elem) returns a mask of elem bytes (1:
// padding), computed by the compiler's __builtin_clear_padding on the
// declaration's own type, or nullptr. The runner reads it when it loads
// the object (runtime/runner.cpp) and skips reads of padding bytes
// (runtime/check.cpp, tg_access).

// slotEntry matches an entry of a translated TU's slot table:
// "  {ID, sizeof(TYPE), alignof(TYPE), ...".
var slotEntry = regexp.MustCompile(`(?m)^  \{(\d+), sizeof\((.+?)\), alignof\(`)

// paddingTable returns the text to append to a translated TU's checking
// build: mtl_tg_padding over the slots of its slot tables, or nil when it
// has none. A slot whose tables name more than one type (a kernel template
// instantiated twice) gets no mask.
func paddingTable(cpp []byte) []byte {
	if !bytes.HasPrefix(cpp, []byte("#include <metal_stdlib>")) {
		return nil
	}
	types := map[int]string{}
	var ids []int
	for _, m := range slotEntry.FindAllSubmatch(cpp, -1) {
		id, err := strconv.Atoi(string(m[1]))
		if err != nil {
			continue
		}
		t := string(m[2])
		old, seen := types[id]
		switch {
		case !seen:
			types[id] = t
			ids = append(ids, id)
		case old != t:
			types[id] = ""
		}
	}
	var cases bytes.Buffer
	for _, id := range ids {
		if t := types[id]; t != "" {
			fmt.Fprintf(&cases, "  case %d: return ::mtl_pad::mask<%s>(elem);\n", id, t)
		}
	}
	if cases.Len() == 0 {
		return nil
	}
	return []byte(`
// The checking build's padding table (metalab backend/cpu/padding.go).
#include <cstring>
#include <type_traits>
namespace mtl_pad {
template <class T> const unsigned char* mask(size_t* elem) {
  using E = typename std::remove_all_extents<T>::type;
  *elem = sizeof(E);
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
  static unsigned char m[sizeof(E)];
  alignas(E) unsigned char b[sizeof(E)];
  std::memset(b, 0xff, sizeof b);
  __builtin_clear_padding(reinterpret_cast<E*>(b));
  for (size_t i = 0; i < sizeof(E); i++) m[i] = b[i] == 0;
  return m;
#endif
#endif
  return nullptr;
}
}  // namespace mtl_pad
extern "C" const unsigned char* mtl_tg_padding(int slot, size_t* elem) {
  switch (slot) {
` + cases.String() + `  }
  *elem = 0;
  return nullptr;
}
`)
}
