//go:build !unix

package validate

func processCPU() int64 { return 0 }
