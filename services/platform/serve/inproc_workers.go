package serve

import "time"

// workers runs Local's handlers, each on a goroutine of its own as
// before, but on goroutines kept from earlier calls: a new goroutine
// starts with a small stack, and a handler under its interceptors and
// stats handlers grows it, by copying, on every call (a sixth of an
// in-process call's CPU, profiled). grpc-go's server keeps stream workers
// for the same reason.
type workers struct {
	tasks chan func() // unbuffered: a task goes to a worker waiting for one
}

// handlerWorkers run every Local's handlers.
var handlerWorkers = &workers{tasks: make(chan func())}

const (
	// workerIdle is how long a worker waits for a task before it ends,
	// so a burst's workers do not outlive it for long.
	workerIdle = 10 * time.Second
	// workerTasks is how many tasks a worker runs before it ends, so a
	// stack one deep call grew is not kept for ever.
	workerTasks = 1 << 16
)

// run runs f on a waiting worker, or on a new one.
func (w *workers) run(f func()) {
	select {
	case w.tasks <- f:
	default:
		go w.work(f)
	}
}

func (w *workers) work(f func()) {
	f()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for range workerTasks - 1 {
		idle.Reset(workerIdle)
		select {
		case f := <-w.tasks:
			f()
		case <-idle.C:
			return
		}
	}
}
