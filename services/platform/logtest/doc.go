// Package logtest holds what a test reads a log through while the code
// under test, or a process it started, still writes to it.
package logtest
