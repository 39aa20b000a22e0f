// Package routing knows which providers are configured, which models they
// serve, and turns a name, an alias, an empty name or "auto" into one model.
package routing
