package main

import (
	"context"
	"log/slog"

	edgeserver "github.com/zenmcp/zen/services/edge/server"
	executorserver "github.com/zenmcp/zen/services/executor/server"
	memoryserver "github.com/zenmcp/zen/services/memory/server"
	"github.com/zenmcp/zen/services/platform/serve"
	routerserver "github.com/zenmcp/zen/services/router/server"
	"google.golang.org/grpc"
)

// runStdio serves MCP on stdin/stdout. Each of memory, router and executor
// is dialled when its address is set, and otherwise runs in this process
// and is called without a socket (serve.Local), so no port is opened.
// Nothing but MCP is written to stdout. On a signal the edge stops taking
// calls and finishes those in flight before the in-process roles stop
// (stages).
func runStdio(ctx context.Context, s *settings, logger *slog.Logger) error {
	g := serve.NewGRPC(s.security.ServerOptions()...)
	local := g.Local(s.security)
	st := newStages(ctx, logger)
	defer st.Stop() // ends what started when starting fails
	var remote []*grpc.ClientConn
	defer func() { closeAll(remote...) }()
	connFor := func(addr, env string) (grpc.ClientConnInterface, error) {
		if addr == "" {
			return local, nil
		}
		c, err := dial(s, addr, env)
		if err != nil {
			return nil, err
		}
		remote = append(remote, c)
		return c, nil
	}
	mem, err := connFor(s.memoryAddr, "ZEN_MEMORY_ADDR")
	if err != nil {
		return err
	}
	rt, err := connFor(s.routerAddr, "ZEN_ROUTER_ADDR")
	if err != nil {
		return err
	}
	ex, err := connFor(s.executorAddr, "ZEN_EXECUTOR_ADDR")
	if err != nil {
		return err
	}
	var serving []string // ready at once; memory reports its own health
	anyLocal := false    // whether any role runs in this process
	if s.memoryAddr == "" {
		anyLocal = true
		m, err := buildMemory(s, logger)
		if err != nil {
			return err
		}
		defer m.Close()
		m.Register(g)
		g.SetStatus(false, memoryserver.ServiceName) // until its store first answers
		st.Back(func(ctx context.Context) error {
			m.Watch(ctx, func(ok bool) { g.SetStatus(ok, memoryserver.ServiceName) })
			return nil
		})
	}
	var localRouter *routerserver.Server
	if s.routerAddr == "" {
		r, err := buildRouter(s, logger, "stdio")
		if err != nil {
			return err
		}
		r.Register(g)
		serving, anyLocal, localRouter = append(serving, routerserver.ServiceName), true, r
	}
	if s.executorAddr == "" {
		e, err := buildExecutor(s, rt, logger)
		if err != nil {
			return err
		}
		e.Register(g)
		serving, anyLocal = append(serving, executorserver.ServiceName), true
	}
	g.SetServing(serving...)
	if localRouter != nil {
		holdRouter(g, localRouter)
	}
	if anyLocal {
		st.Back(func(ctx context.Context) error { return g.Serve(ctx, nil) }) // in-process callers only
	}
	edge, err := newEdge(st.FrontContext(), s, edgeserver.Conns{Memory: mem, Router: rt, Executor: ex}, logger, false)
	if err != nil {
		return err
	}
	// The client closing stdin ends the session, and with it the process.
	st.Front(edge.RunStdio)
	return st.Wait()
}
