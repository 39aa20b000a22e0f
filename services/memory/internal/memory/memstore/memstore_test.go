package memstore

import (
	"testing"

	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) memory.Store { return New() })
}
