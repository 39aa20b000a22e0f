// Package refused gives tests a loopback address whose connections are
// refused for as long as the test runs (on Unix; elsewhere, when it is
// made). The port of a listener that was
// opened and closed does not do: a parallel test's listener can be given
// the same port, and the "refused" call then reaches it.
package refused
