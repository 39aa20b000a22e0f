package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/origin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestToStatus(t *testing.T) {
	t.Parallel()
	lostAt := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		err  error
		code codes.Code
		says string
	}{
		{"not found", memory.ErrNotFound, codes.NotFound, "not found or expired"},
		{"lost", fmt.Errorf("get: %w", &memory.LostError{At: lostAt}), codes.DataLoss,
			"the memory store lost its data at 2026-01-02 03:04:05 UTC"},
		{"unavailable", memory.ErrUnavailable, codes.Unavailable, "try again"},
		{"full", fmt.Errorf("append: %w", memory.ErrFull), codes.ResourceExhausted, "the store is full"},
		// The thread, not the store: the client can go on in a new one.
		{"thread full", fmt.Errorf("%w: start a new conversation", memory.ErrThreadFull), codes.FailedPrecondition,
			"start a new conversation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := New(nil, slog.New(slog.DiscardHandler))
			err := s.toStatus(context.Background(), "op", tc.err)
			st := status.Convert(err)
			if st.Code() != tc.code || !strings.Contains(st.Message(), tc.says) {
				t.Errorf("status %v %q, want %v saying %q", st.Code(), st.Message(), tc.code, tc.says)
			}
			// A full store says so where the edge and the gateway look.
			if reason, _ := origin.Of(err); (reason == origin.StoreFull) != errors.Is(tc.err, memory.ErrFull) {
				t.Errorf("origin %q of %v", reason, tc.err)
			}
		})
	}
}
