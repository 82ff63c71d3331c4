// Package simtests holds simulation tests of a weft cluster built from real
// processes on loopback: a three-node nats-server cluster (built from the
// nats-server module) with JetStream, two weft nodes (weft serve --nats
// ... --replicas 3 --lease-ttl 1s --remote-tools) and two tool workers
// (weft worker, or simworker, which records deploy's side effect as a file
// per execution); TestRestartNATSNode runs the demo tools locally on the
// nodes instead, with no workers. The tests inject faults — SIGKILL of the node driving a
// session while its run waits or while its tool calls are out, each NATS
// server restarted on its store, the driving node stopped with SIGSTOP past
// its lease TTL, SIGKILL of a worker mid-call, a worker stopped past its
// heartbeat deadline, a duplicated and a forged result — and then check
// that every session completes or waits as it should, that no acknowledged
// event is lost (versions 1..n, unique ids, one run.started and one end
// per run, the events read before the fault still there), that side
// effects run at most twice under the same call id, and that the audit
// chain verifies.
//
// TestRestartEmbeddedNodeAfterKill needs no cluster: weft demo -serve on
// its own embedded server is killed (SIGKILL) while its run waits, weft
// serve is started again on the same data directory, and the first
// weft approve sent once it has reported that it is ready must be served.
//
// The worker faults strike several sessions at once, half of them driven
// by each weft node (a session is started on the node that should drive
// it). The demo model gives the calls of every session the same ids, so
// the workers run calls with the same call id for several sessions at
// once; the checks hold per session, and side effects are counted per
// (session, run, call id), the protocol's idempotency key.
//
// Each worker fault test runs twice: with the workers in the core queue
// group, and with them in a worker pool (simworker --pool), whose JetStream
// work queue has three replicas. TestRestartPoolStreamLeader adds the
// pool's own fault: pooled workers that run one call at a time are all
// busy while more calls wait in the pool stream, and the NATS server that
// leads the stream is killed and started again; every call waiting there
// runs once, and only once. TestKillOwnerMidCall also runs with pooled
// workers (weft worker --pool): the survivor's deliveries of the calls it
// takes over must be stored in the pool stream, not dropped as duplicates
// of the victim's.
//
// The tests build the weft, nats-server and simworker binaries once per
// run into a temporary directory, bound each test by a deadline, and kill
// and reap every process they start; a failing test prints the logs of its
// processes. Every test has its own cluster and runs in parallel with the
// others (go test's -parallel, GOMAXPROCS by default): they mostly wait,
// for lease TTLs, heartbeat deadlines and raft elections. With -short they
// are skipped.
package simtests
