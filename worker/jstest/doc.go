// Package jstest runs the JavaScript tool worker of worker/js (written
// from docs/worker-protocol.md with the npm nats package) against a weft
// runtime, to show that the worker protocol is language-neutral: taking
// calls from the core queue group and from a worker pool (JetStream work
// queue), alone and in one pool with Go workers.
//
// The test needs node (20 or later) on PATH and the nats package installed
// in worker/js:
//
//	cd worker/js && npm install --no-save --no-package-lock
//
// Without them it skips, unless WEFT_JS_WORKER=require is set (CI sets it),
// in which case it fails.
package jstest
