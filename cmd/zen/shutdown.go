package main

import (
	"context"
	"log/slog"

	"golang.org/x/sync/errgroup"
)

// stages runs the servers of one process so that stopping follows their
// dependencies. The front (MCP and the gateway: what takes calls from
// clients) stops first, when ctx ends, and lets its calls in flight
// finish. The back (the gRPC services, and what keeps their health) keeps
// serving until the whole front has returned, so those calls can still
// save their exchange in memory; its stores close after it, when the
// caller's deferred Close runs. A failure on either side stops both.
type stages struct {
	logger              *slog.Logger
	front, back         *errgroup.Group
	frontCtx, backCtx   context.Context
	stopFront, stopBack context.CancelFunc
}

func newStages(ctx context.Context, logger *slog.Logger) *stages {
	s := &stages{logger: logger}
	frontCtx, stopFront := context.WithCancel(ctx)
	// The back outlives the signal: Wait stops it once the front is done.
	backCtx, stopBack := context.WithCancel(context.WithoutCancel(ctx))
	s.front, s.frontCtx = errgroup.WithContext(frontCtx)
	s.back, s.backCtx = errgroup.WithContext(backCtx)
	s.stopFront, s.stopBack = stopFront, stopBack
	context.AfterFunc(s.backCtx, stopFront) // a back that fails takes the front with it
	context.AfterFunc(s.frontCtx, func() { logger.Info("stopping: no new calls; calls in flight finish") })
	return s
}

// Front runs f in the front until the process stops. f serves until its
// context ends, then drains.
func (s *stages) Front(f func(context.Context) error) {
	s.front.Go(func() error { return f(s.frontCtx) })
}

// Back runs f in the back, which stops only after the front.
func (s *stages) Back(f func(context.Context) error) {
	s.back.Go(func() error { return f(s.backCtx) })
}

// FrontContext is the front's lifetime, for what serves calls (the edge's
// health watch, the gateway).
func (s *stages) FrontContext() context.Context { return s.frontCtx }

// Wait returns once the front has finished and then the back, with the
// first error either had.
func (s *stages) Wait() error {
	err := s.front.Wait()
	s.logger.Info("stopping: calls drained; the services stop")
	s.stopBack()
	if backErr := s.back.Wait(); err == nil {
		err = backErr
	}
	s.stopFront()
	return err
}

// Stop stops both at once and waits for them: for a failure while
// starting. After Wait it does nothing.
func (s *stages) Stop() {
	s.stopFront()
	s.stopBack()
	_ = s.front.Wait()
	_ = s.back.Wait()
}
