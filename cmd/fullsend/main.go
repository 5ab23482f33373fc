// Command fullsend compiles agent definitions into OpenShell sandbox
// policies, builds and signs the agent-sandbox image, verifies it before a CI
// job runs it, and runs agents inside OpenShell sandboxes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fullsend:", err)
		os.Exit(exitCode(err))
	}
}
