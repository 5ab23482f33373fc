package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err != nil {
		printError(os.Stderr, err)
		os.Exit(exitCode(err))
	}
}

// printError prints a command's error, CI-safe (ciSafe): its text quotes
// paths, names and file contents that the command does not control. Errors
// of run are escaped already.
func printError(w io.Writer, err error) {
	msg := err.Error()
	if !errors.As(err, new(logSafeError)) {
		msg = ciSafe(msg)
	}
	fmt.Fprintln(w, "fullsend:", msg)
}
