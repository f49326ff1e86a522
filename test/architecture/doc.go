// Package architecture checks syncd's layering from its imports: no
// package imports one that stands above it, and shipped code imports no
// test support except where it is user-facing (the demos, the benchmarks
// and the emulator command). docs/ARCHITECTURE.md explains the layers.
package architecture
