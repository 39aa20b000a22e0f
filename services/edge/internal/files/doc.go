// Package files reads the user's files for a tool call: absolute paths
// only, directories expanded to their source files, contents hashed, and a
// token budget that decides what fits.
package files
