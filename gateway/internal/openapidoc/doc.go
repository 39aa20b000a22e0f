// Package openapidoc edits the gateway's OpenAPI 2.0 document as JSON. make
// gen uses it to merge the routes the gateway serves itself (history,
// export, import, probes, the document) into what protoc-gen-openapiv2
// generates from the protos, so that one document describes the gateway;
// the gateway uses it to serve that document with zen's build version.
// Members keep the order the generator writes them in, and the output is
// indented as the generator indents it, so a regenerated document differs
// from the committed one only where its content does.
package openapidoc
