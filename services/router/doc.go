// Package router is the zen router service module: model catalogues, name
// resolution and auto mode, and the calls to model providers. The binary
// wires it through the server package.
package router
