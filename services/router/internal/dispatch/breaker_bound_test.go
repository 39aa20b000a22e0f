package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/router/internal/provider"
)

// OpenRouter serves any vendor/model a client names, so model breakers
// must not grow with the names clients invent.
func TestModelBreakersStayBounded(t *testing.T) {
	t.Parallel()
	q := quiet()
	b := newBreakers(testPolicy, q.logger, q.in)
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	unknown := &provider.Error{Provider: "OpenRouter", Status: http.StatusNotFound, Msg: "no such model"}
	fail := func(model string) error {
		for range testPolicy.CooldownAfter {
			p, err := b.admit(now, "openrouter", model, "")
			if err != nil {
				return err
			}
			b.settle(context.Background(), now, p, unknown)
		}
		_, err := b.admit(now, "openrouter", model, "")
		return err
	}
	for i := range 3 * maxModelBreakers {
		_ = fail(fmt.Sprintf("vendor/made-up-%d", i))
	}
	if n := len(b.models); n > maxModelBreakers {
		t.Errorf("%d model breakers kept, want at most %d", n, maxModelBreakers)
	}
	if _, err := b.admit(now, "openrouter", "openai/gpt-5", ""); err != nil {
		t.Errorf("a model that never failed: %v", err)
	}

	now = now.Add(testPolicy.Cooldown)
	if err := fail("vendor/broken-after-the-cooldown"); !errors.Is(err, ErrCoolingDown) {
		t.Errorf("once the old breakers' cooldowns end, a newly broken model: %v, want its breaker open", err)
	}
}
