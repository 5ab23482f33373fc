//go:build !unix

package openshell

func processCPU() int64 { return 0 }
