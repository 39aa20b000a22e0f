module github.com/zenmcp/zen/services/edge

go 1.26.0

require (
	github.com/zenmcp/zen/proto/gen v0.0.0
	github.com/zenmcp/zen/services/platform v0.0.0
)

replace github.com/zenmcp/zen/proto/gen => ../../proto/gen

replace github.com/zenmcp/zen/services/platform => ../platform
