package forge

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"time"
)

// ServeOptions tune ServeHandler.
type ServeOptions struct {
	// WriteTimeout bounds writing a response (covers the handler's work).
	WriteTimeout time.Duration
	// ErrorLog receives server errors; nil discards them.
	ErrorLog *log.Logger
	// OnShutdown runs after the server stopped (e.g. to close idle clients).
	OnShutdown func()
}

// ServeHandler serves h on ln with production timeouts and header limits
// until ctx is cancelled, then shuts down gracefully: it stops accepting,
// gives in-flight requests up to 10 seconds, then closes what is left. It
// returns nil after a clean shutdown.
func ServeHandler(ctx context.Context, ln net.Listener, h http.Handler, o ServeOptions) error {
	errLog := o.ErrorLog
	if errLog == nil {
		errLog = log.New(io.Discard, "", 0)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          errLog,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	var err error
	select {
	case err = <-done:
		// Serve failed on its own (listener error).
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
		if err != nil {
			_ = srv.Close()
		}
		if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}
	if o.OnShutdown != nil {
		o.OnShutdown()
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// redactURLError renders an upstream client error without its URL query (the
// URL itself holds no credential; the query may hold agent text).
func redactURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return ue.Op + ": timeout"
		}
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}
