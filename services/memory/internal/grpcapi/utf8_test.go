package grpcapi

import (
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/serve"
)

// zen's messages check their own strings when they cross in process
// (serve.UTF8Checked, which protoc-gen-zen-utf8 writes): were the method
// renamed on either side, Local would quietly marshal every message again.
var _ serve.UTF8Checked = (*memoryv1.PrepareCallResponse)(nil)
