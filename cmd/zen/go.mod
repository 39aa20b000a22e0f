module github.com/zenmcp/zen/cmd/zen

go 1.26.0

require (
	github.com/zenmcp/zen/gateway v0.0.0
	github.com/zenmcp/zen/proto/gen v0.0.0
	github.com/zenmcp/zen/services/edge v0.0.0
	github.com/zenmcp/zen/services/executor v0.0.0
	github.com/zenmcp/zen/services/memory v0.0.0
	github.com/zenmcp/zen/services/platform v0.0.0
	github.com/zenmcp/zen/services/router v0.0.0
)

replace github.com/zenmcp/zen/proto/gen => ../../proto/gen

replace github.com/zenmcp/zen/services/platform => ../../services/platform

replace github.com/zenmcp/zen/services/memory => ../../services/memory

replace github.com/zenmcp/zen/services/router => ../../services/router

replace github.com/zenmcp/zen/services/executor => ../../services/executor

replace github.com/zenmcp/zen/services/edge => ../../services/edge

replace github.com/zenmcp/zen/gateway => ../../gateway
