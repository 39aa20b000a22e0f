// Package childproc ties the life of a process a test starts (a zen, a
// redis-server) to the test binary's, so that one that dies without its
// cleanups (a panic, a timeout) leaves nothing running on the machine.
package childproc
