// Package whiskapi is the Whisk's API front door: nuv's own controller, written in Go, serving a
// documented subset of Apache OpenWhisk's REST API. It is not Apache OpenWhisk's controller (a
// JVM service with Kafka, invokers and a load balancer): it keeps entities and enforces limits the
// way OpenWhisk's API does, and it never runs an action.
//
// What it serves (paths, status codes and error bodies shaped like OpenWhisk's):
//
//	GET    /ping                                      liveness: "pong"
//	GET    /ready                                     readiness: the configured CouchDB and Redis answer (503 naming the one that does not)
//	GET    /api/v1/namespaces                         the namespaces of the caller's key (one)
//	GET    /api/v1/namespaces/{ns}/actions            list (?limit= 0..200, default 30; ?skip=); entries without code
//	GET    /api/v1/namespaces/{ns}/actions/{name}     get (?code=false leaves the code out)
//	PUT    /api/v1/namespaces/{ns}/actions/{name}     create; 409 when it exists unless ?overwrite=true, which updates it (version +1)
//	DELETE /api/v1/namespaces/{ns}/actions/{name}     delete; 404 when missing; answers the deleted action
//	POST   /api/v1/namespaces/{ns}/actions/{name}     invocation: 501, this controller has no invoker
//
// Packages, triggers, rules and activations answer 501 with an OpenWhisk-shaped error naming what
// is missing. {ns} is the caller's namespace or "_" for it; another namespace is 403.
//
// Storage: actions are CouchDB documents in the database the operator's init Job creates
// ("whisks"), with id "<namespace>/<name>" and entityType "action", as OpenWhisk keeps them. Every
// update carries the revision it read (optimistic concurrency): a writer that lost a race gets 409
// "Concurrent modification to resource detected.", never a silent lost update.
//
// Auth: HTTP basic auth with the namespace's key "<uuid>:<key>" (OpenWhisk's format), compared in
// constant time; the key is never logged.
//
// Throttling: every authenticated API request counts against its namespace in Redis (INCR and
// EXPIRE on one key per namespace and minute, through a small RESP client of this package); over
// the limit the answer is 429 "Too many requests in the last minute (count: N, allowed: M).". With
// no Redis configured nothing is throttled.
//
// Configuration comes from the environment (ConfigFromEnv); the operator sets it from the Whisk.
package whiskapi
