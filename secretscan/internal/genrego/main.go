// Command genrego writes secretscan.RegoModule to the file named by -o
// (lint/rules/secretrules.rego, from `go generate ./lint`).
package main

import (
	"flag"
	"log"
	"os"

	"github.com/fullsend-ai/agent-sandbox/secretscan"
)

func main() {
	out := flag.String("o", "secretrules.rego", "output file")
	flag.Parse()
	if err := os.WriteFile(*out, secretscan.RegoModule(), 0o644); err != nil {
		log.Fatal(err)
	}
}
