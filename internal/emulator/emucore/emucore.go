// Package emucore is what nuv's cloud emulators (AWS in package emulator, Azure in azure, GKE in
// gcp) share: the detached serving process and its server.json record (Daemon), the atomic 0600
// state file (SaveJSON, LoadJSON), the /_nuv/faults endpoint and faults.json (ServeFaults,
// ReadFaultsFile, Fires), and the TokenReview webhook the emulated clusters' control planes call
// (ServeTokenReview). Each emulator keeps its own API, errors and wording; this package only holds
// the mechanics they had written three times.
package emucore
