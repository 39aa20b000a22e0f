// Package logfile is a log file that rotates by size: when a write would
// take it past its limit, the file moves aside as name.1 (name.1 as name.2,
// and so on, the oldest dropped) and a new one starts. zen over stdio logs
// to one, since the agent that starts it hides its stderr. The file is the
// user's own and private: a link, a FIFO, another user's file or one with
// more hard links at its path is refused rather than written through.
package logfile
