// Package files reads the user's files for a tool call, and writes the one
// file zen leaves in a working directory: absolute paths only, inside the
// roots clients may name (ZEN_FILE_ROOTS, the user's home by default on one
// person's machine, none on a shared server), never credential stores,
// .env files or zen's own configuration; directories expanded to their
// source files, contents hashed; writes that never follow a link.
package files
