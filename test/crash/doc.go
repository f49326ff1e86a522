// Package crash is syncd's crash suite: the real binary, built once,
// killed with SIGKILL at random (seeded) moments of forward runs,
// resyncs and webhook bursts, then started again; it must converge with
// no duplicate contact and no lost acknowledged event. A state file left
// damaged (cut short, bytes flipped) must open or be refused with a
// message naming it, never silently lose links.
//
// Replay a failure with -seed=N; make more kills with -kills=K.
package crash
