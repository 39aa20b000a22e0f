// Command openapimerge merges the routes the gateway serves itself
// (gateway/routes.swagger.json) into the OpenAPI document protoc-gen-openapiv2
// generates from the protos, in place. make gen runs it after buf generate:
//
//	go run ./gateway/internal/openapimerge gateway/openapi/zen.swagger.json gateway/routes.swagger.json
package main
