package server

import (
	"context"
	"os"
	"time"

	"github.com/zenmcp/zen/services/edge/internal/stdio"
	"github.com/zenmcp/zen/services/platform/serve"
)

// RunStdio serves MCP over stdin and stdout until the client leaves or ctx
// ends. The client leaving (stdin's end) ends the session once the calls
// it sent are answered, or after serve.DrainTimeout. When ctx ends it
// stops taking requests (a new one is refused) and lets the calls in
// flight finish, answer and save their exchange, for up to
// serve.DrainTimeout; then it cancels them, and they answer that zen is
// stopping. It serves one session, so call it once.
func (s *Server) RunStdio(ctx context.Context) error {
	d := newDrainer()
	defer d.cutNow()
	s.mcp.AddReceivingMiddleware(d.middleware)
	// The session outlives ctx: the drain below decides when it ends.
	life := context.WithoutCancel(ctx)
	// stdio.Transport answers a malformed line with a JSON-RPC error and
	// reads on; the SDK's own transport would end the session.
	transport := &stdio.Transport{In: os.Stdin, Out: os.Stdout, AnswerBeforeEOF: serve.DrainTimeout}
	ss, err := s.mcp.Connect(life, transport, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		return err
	case <-ctx.Done():
	}
	timeout := time.AfterFunc(serve.DrainTimeout, d.cutNow)
	defer timeout.Stop()
	d.drain()
	// The handlers have returned; their answers may still be on their way
	// to stdout. Closing now would lose them.
	flushed, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	transport.WaitAnswered(flushed)
	cancel()
	// Nothing runs now, so closing just closes the connection, but for an
	// answer stuck on stdout (its reader stopped reading), which the close
	// waits on: the process ends all the same.
	closed := make(chan struct{})
	go func() {
		_ = ss.Close()
		<-ended
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(serve.StopGrace):
	}
	return nil
}
