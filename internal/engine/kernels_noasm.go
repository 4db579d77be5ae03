//go:build !amd64 || purego

package engine

// Without the amd64 assembly the serial kernels are their Go twins
// (kernels_vec.go).

const hasVec = false

func swigluVec(gate, up []float32)                { swigluGo(gate, up) }
func scaleMax(x []float32, scale float32) float32 { return scaleMaxGo(x, scale) }
func expSum(x []float32, mx float32) float32      { return expSumGo(x, mx) }
func scaleVec(x []float32, a float32)             { scaleGo(x, a) }
func sumSquares(x []float32) float64              { return sumSquaresGo(x) }
func scaleMul(dst, x, w []float32, scale float32) { scaleMulGo(dst, x, w, scale) }
