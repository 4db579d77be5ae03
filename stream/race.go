//go:build race

package stream

// raceEnabled turns the kernel's receive timestamps off under the race
// detector: the reads it knows of synchronise a connection's writer with
// its reader, and a recvmsg of our own would hide that from it (a false
// race between a test's handler and its client).
const raceEnabled = true
