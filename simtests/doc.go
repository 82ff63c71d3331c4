// Package simtests holds simulation tests of a weft cluster built from real
// processes on loopback: a three-node nats-server cluster (built from the
// nats-server module) with JetStream, weft nodes (weft serve --nats) and
// tool workers (weft worker), into which the tests inject faults — SIGKILL
// of the node driving a session, a NATS node restarted on its store, a
// node stopped with SIGSTOP past its lease TTL — and then check that every
// session completes or waits as it should, that no acknowledged event is
// lost and that the audit chain verifies.
//
// The package has no code of its own: the tests build the weft and
// nats-server binaries once per run into a temporary directory, and kill
// and reap every process they start.
package simtests
