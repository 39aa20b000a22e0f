// Package cores runs a process on one core while its calls come one at a
// time, and on every core it may use as soon as they overlap or one core
// is not enough.
//
// With a core to spare, each hand-off between goroutines (the edge to
// memory, to the executor, to the router, and back) wakes the idle core;
// where idle cores halt at once, as this project's benchmark machine's do,
// each wake-up waits for the host, and a call that runs its roles one
// after another pays it a dozen times or more. On one core the same call
// wakes nothing, but one core caps the process under load. A Governor
// watches how much of the time more than one call is in flight, and how
// much CPU the process used: while calls rarely overlap and the process
// uses less than most of one core, it sets GOMAXPROCS to 1; within a tick
// of calls overlapping, or of the one core filling up (work that is no
// call: the gateway, roles served to other processes, a call's own heavy
// work), it gives back Go's own (runtime.SetDefaultGOMAXPROCS, which also
// follows a container's CPU limit).
package cores
