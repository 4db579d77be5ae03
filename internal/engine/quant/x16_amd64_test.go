//go:build amd64 && !purego

package quant

// x16AsmImpls lists the assembly implementations of the 16-row layout of
// t that this CPU runs.
func x16AsmImpls(t Type) []x16Impl {
	var fs []x16Impl
	add := func(name string, f x16Func) {
		if f != nil {
			fs = append(fs, x16Impl{name, f})
		}
	}
	switch t {
	case Q4_0:
		add("avx512-vnni", q4_0x16VNNI)
		add("avx2", q4_0x16AVX2)
	case Q8_0:
		add("amx", q8_0x16AMX)
		add("avx512-vnni", q8_0x16VNNI)
		add("avx2", q8_0x16AVX2)
	case Q5_0:
		add("avx512-vnni", q5_0x16VNNI)
		add("avx2", q5_0x16AVX2)
	case Q4_K:
		add("avx512-vnni", q4_Kx16VNNI)
	case Q6_K:
		add("avx512-vnni", q6_Kx16VNNI)
	}
	return fs
}
