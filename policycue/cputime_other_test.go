//go:build !unix

package policycue

func processCPU() int64 { return 0 }
