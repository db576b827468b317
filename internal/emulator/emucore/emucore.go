// Package emucore is the kernel of nuv's cloud emulators (AWS in package aws, Azure in azure,
// GKE in gcp): the server core each emulator's Server embeds (Kernel: its state under one lock,
// saved atomically 0600 after each change; the faults injected and the calls counted; background
// jobs and the reconcile loop that moves resources through their statuses; the admin endpoints
// /_nuv/health and /_nuv/faults behind an admin token; New, Start, Close and Serve on loopback,
// with TLS where the emulator uses it), the one control-plane backend behind every emulated
// cluster (ControlPlanes: nuv local clusters), the detached serving process and its server.json
// record (Daemon), the TokenReview webhook the control planes call (ServeTokenReview) and the
// table routing of REST operations (Routes). Each emulator keeps its own services: their
// operations, wire formats, errors and wording.
package emucore
