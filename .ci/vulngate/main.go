// Command vulngate is .ci/run's vulnerability gate. It reads the output of
// govulncheck -format json on stdin and fails when the code calls a
// vulnerability that the exceptions file does not accept, and when an
// accepted exception is no longer reported (a stale line hides nothing and
// must go). It prints every accepted exception on each run.
//
//	govulncheck -db file://... -format json ./... >vuln.json
//	go -C .ci/vulngate run . -exceptions "$PWD/.ci/govulncheck-exceptions.txt" <vuln.json
//
// Exit status: 0 pass, 1 gate failure, 2 unreadable input or exceptions.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	path := flag.String("exceptions", "", "exceptions file (see its header for the format)")
	flag.Parse()
	if *path == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: vulngate -exceptions FILE <govulncheck.json")
		os.Exit(2)
	}
	os.Exit(run(*path, os.Stdin, os.Stdout, os.Stderr))
}

func run(path string, in io.Reader, stdout, stderr io.Writer) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(stderr, "vulngate: %v\n", err)
		return 2
	}
	defer f.Close()
	exceptions, err := ParseExceptions(f)
	if err != nil {
		fmt.Fprintf(stderr, "vulngate: %s: %v\n", path, err)
		return 2
	}
	scan, err := ReadScan(in)
	if err != nil {
		fmt.Fprintf(stderr, "vulngate: reading govulncheck output: %v\n", err)
		return 2
	}
	v := Judge(scan, exceptions)
	v.Write(stdout, stderr, path)
	if !v.OK() {
		return 1
	}
	return 0
}
