// Package cores runs a process on one core while its calls come one at a
// time, and on every core it may use as soon as they overlap.
//
// With a core to spare, each hand-off between goroutines (the edge to
// memory, to the executor, to the router, and back) wakes the idle core;
// where idle cores halt, as a virtual machine's do, each wake-up waits for
// the host, and a call that runs its roles one after another pays it a
// dozen times or more. On one core the same call wakes nothing, but one
// core caps the process under load. A Governor watches how much of the
// time more than one call is in flight: while that is rare it sets
// GOMAXPROCS to 1, and within a tick of calls overlapping it gives back
// Go's own (runtime.SetDefaultGOMAXPROCS, which also follows a container's
// CPU limit).
package cores
