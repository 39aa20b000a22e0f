package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"
)

var setLoggerOnce sync.Once

// RouteLogs sends go-redis's own messages (connection pool retries and the
// like) to logger at debug level instead of raw lines on stderr: zen
// already reports an unreachable Redis once, clearly, through readiness
// and call errors. The go-redis logger is process-wide, so the first
// caller's logger wins.
func RouteLogs(logger *slog.Logger) {
	setLoggerOnce.Do(func() { redis.SetLogger(slogAdapter{logger}) })
}

type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Printf(ctx context.Context, format string, v ...any) {
	a.l.DebugContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
}
