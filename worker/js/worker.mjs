// A weft tool worker in JavaScript, written from docs/worker-protocol.md
// only, with the npm "nats" package (v2). It serves three tools:
//
//   js_add       {a, b} numbers -> their sum (a success)
//   js_feedback  {topic}        -> a feedback return (an expected,
//                                  correctable condition)
//   js_slow      {ms}           -> "slept <ms>" after ms milliseconds,
//                                  unless the call is cancelled first
//   js_big       {bytes}        -> a string of that many bytes (to test
//                                  results too large for a NATS message)
//
// It has no blob store (docs/worker-protocol.md, "Payloads too large for a
// message"): a result too large for a message is reported as an execution
// error saying so, and a call whose arguments come by reference is refused
// the same way, so the node always hears a return.
//
// Usage: node worker.mjs NATS_URL [WORKER_ID [POOL [CONCURRENCY [QUEUE_REPLICAS]]]]
//
// Without POOL (or with an empty one) it takes calls from the core queue
// group, with no limit on the calls it runs at once. With POOL it joins
// that worker pool (docs/worker-protocol.md, "Worker pools"): it takes its
// calls from the pool's JetStream work queue, running at most CONCURRENCY
// calls at once (default 16). QUEUE_REPLICAS (1 to 5, default 1) are the
// replicas of the pool stream when this worker creates it (3 on a
// fault-tolerant cluster); a stream that exists keeps its configuration.
//
// Credentials come from the environment, never the command line:
//   WEFT_NKEY_FILE  a file holding an nkey seed, such as the worker role's
//                   seed a weft node generates (DATA/credentials/worker.nk)
//   WEFT_CREDS_DIR  a weft node's credentials directory: the worker reads
//                   worker.nk there (when WEFT_NKEY_FILE is not set)
//   WEFT_NATS_TOKEN a token
// Its reply subjects start with _INBOX_worker, the inbox the worker role
// may subscribe to on a bus with weft's role permissions (README, "Security
// model").
//
// It prints one line on stdout per event, for tests and operators:
//   READY <worker id>               subscribed, serving
//   STARTED <worker id> <call id>   a call starts running
//   CANCELLED <worker id> <call id> a running call was cancelled
//   STOPPING <worker id>            a graceful stop began: it takes no
//                                   more calls
// and stops on SIGINT or SIGTERM (unsubscribes, lets running calls end).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AckPolicy, connect, DiscardPolicy, nanos, nkeyAuthenticator, RetentionPolicy, StorageType, tokenAuthenticator } from "nats";

const ROOT = "weft";
const QUEUE = "weft-workers";
const DEFAULT_HEARTBEAT_MS = 250;
// A pooled worker's slots when CONCURRENCY is not given.
const DEFAULT_POOL_CONCURRENCY = 16;
// How long one pull request waits at the server for a call.
const PULL_WAIT_MS = 30_000;
// How long a slot waits before it pulls again after a failed pull.
const PULL_RETRY_MS = 1_000;
// The pool consumer's ack wait: the heartbeat deadline (4 missed
// heartbeats of 250 ms).
const POOL_ACK_WAIT_MS = 1_000;
// How long a pooled worker waits for JetStream to confirm a call's
// acknowledgement: half the heartbeat deadline, so that the call's next
// heartbeat still comes in time.
const POOL_ACK_CONFIRM_MS = POOL_ACK_WAIT_MS / 2;

const usage = "usage: node worker.mjs NATS_URL [WORKER_ID [POOL [CONCURRENCY [QUEUE_REPLICAS]]]]";
const url = process.argv[2];
if (!url) {
  console.error(usage);
  process.exit(2);
}
const workerId = process.argv[3] || `js-${process.pid}`;
const pool = process.argv[4] || "";
if (pool !== "" && !/^[A-Za-z0-9_-]{1,64}$/.test(pool)) {
  console.error(`weft js worker: pool name ${JSON.stringify(pool)}: want 1 to 64 letters, digits, "_" or "-"\n${usage}`);
  process.exit(2);
}
let concurrency = DEFAULT_POOL_CONCURRENCY;
if (process.argv[5] !== undefined && process.argv[5] !== "") {
  if (pool === "") {
    console.error(`weft js worker: CONCURRENCY applies to a pooled worker only: give a POOL\n${usage}`);
    process.exit(2);
  }
  concurrency = Number(process.argv[5]);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    console.error(`weft js worker: concurrency ${JSON.stringify(process.argv[5])}: want an integer >= 1\n${usage}`);
    process.exit(2);
  }
}
let queueReplicas = 1;
if (process.argv[6] !== undefined && process.argv[6] !== "") {
  if (pool === "") {
    console.error(`weft js worker: QUEUE_REPLICAS applies to a pooled worker only: give a POOL\n${usage}`);
    process.exit(2);
  }
  queueReplicas = Number(process.argv[6]);
  if (!Number.isInteger(queueReplicas) || queueReplicas < 1 || queueReplicas > 5) {
    console.error(`weft js worker: queue replicas ${JSON.stringify(process.argv[6])}: want an integer from 1 to 5\n${usage}`);
    process.exit(2);
  }
}

const enc = new TextEncoder();
const dec = new TextDecoder();

// escapeToken escapes a tool name or call id into one subject token: every
// byte <= 0x20, >= 0x7f, ".", "*", ">" or "%" becomes %XX.
function escapeToken(s) {
  let out = "";
  for (const b of enc.encode(s)) {
    const c = String.fromCharCode(b);
    if (b <= 0x20 || b >= 0x7f || c === "." || c === "*" || c === ">" || c === "%") {
      out += "%" + b.toString(16).toUpperCase().padStart(2, "0");
    } else {
      out += c;
    }
  }
  return out;
}

// unescapeToken reverses escapeToken.
function unescapeToken(tok) {
  const bytes = [];
  for (let i = 0; i < tok.length; i++) {
    if (tok[i] === "%" && /^[0-9A-F]{2}$/.test(tok.slice(i + 1, i + 3))) {
      bytes.push(parseInt(tok.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...enc.encode(tok[i]));
    }
  }
  return dec.decode(new Uint8Array(bytes));
}

// A ToolError ends a call with a non-success return of its kind.
class ToolError extends Error {
  constructor(kind, message, control = {}) {
    super(message);
    this.kind = kind;
    this.control = control;
  }
}

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });

function requireNumber(args, field) {
  if (typeof args[field] !== "number" || !Number.isFinite(args[field])) {
    throw new ToolError("invalid_arguments", `${field} must be a number`, {
      field,
      how_to_fix: `pass ${field} as a JSON number`,
    });
  }
  return args[field];
}

// The tools: definition (as the describe reply carries it) and run.
const tools = {
  js_add: {
    definition: {
      name: "js_add",
      description: "Add two numbers (served by a JavaScript worker).",
      parameters: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
        additionalProperties: false,
      },
      // The node also bounds by it the model's retries of the tool in a
      // run (an invalid_arguments return is one): 0 would fail the run.
      max_retries: 2,
      visibility: "visible",
    },
    validate(args) {
      requireNumber(args, "a");
      requireNumber(args, "b");
    },
    async run(args) {
      return args.a + args.b;
    },
  },
  js_feedback: {
    definition: {
      name: "js_feedback",
      description: "Always answers with feedback: the topic is unknown.",
      parameters: {
        type: "object",
        properties: { topic: { type: "string" } },
        required: ["topic"],
      },
      max_retries: 0,
      visibility: "visible",
    },
    validate(args) {
      if (typeof args.topic !== "string") {
        throw new ToolError("invalid_arguments", "topic must be a string", { field: "topic" });
      }
    },
    async run(args) {
      throw new ToolError("feedback", `unknown topic ${JSON.stringify(args.topic)}: ask about "weft"`);
    },
  },
  js_big: {
    definition: {
      name: "js_big",
      description: "Answer with a string of the given number of bytes.",
      parameters: {
        type: "object",
        properties: { bytes: { type: "integer", minimum: 0 } },
        required: ["bytes"],
      },
      max_retries: 0,
      visibility: "visible",
    },
    validate(args) {
      if (!Number.isInteger(args.bytes) || args.bytes < 0) {
        throw new ToolError("invalid_arguments", "bytes must be a non-negative integer", { field: "bytes" });
      }
    },
    async run(args) {
      return "x".repeat(args.bytes);
    },
  },
  js_slow: {
    definition: {
      name: "js_slow",
      description: "Wait ms milliseconds, then say so.",
      parameters: {
        type: "object",
        properties: { ms: { type: "integer", minimum: 0 } },
        required: ["ms"],
      },
      max_retries: 0,
      visibility: "visible",
    },
    validate(args) {
      if (!Number.isInteger(args.ms) || args.ms < 0) {
        throw new ToolError("invalid_arguments", "ms must be a non-negative integer", { field: "ms" });
      }
    },
    async run(args, signal) {
      await sleep(args.ms, signal);
      return `slept ${args.ms}`;
    },
  },
};

// The flags of each return kind (docs/worker-protocol.md, "The return").
const kindFlags = {
  success: [true, false],
  feedback: [false, false],
  invalid_arguments: [false, true],
  model_retry: [false, true],
  not_found: [false, true],
  user_error: [false, true],
  execution: [false, true],
  timeout: [false, true],
  cancelled: [false, true],
  approval_required: [false, false],
  call_deferred: [false, false],
};

function toolReturn(callId, name, kind, content, attempts, control) {
  const [success, isError] = kindFlags[kind];
  // This worker makes no internal retries, but max_attempts is 1 + the
  // tool's max_retries, as the protocol defines it.
  const maxRetries = tools[name]?.definition.max_retries ?? 0;
  const r = {
    call_id: callId,
    tool_name: name,
    kind,
    success,
    is_error: isError,
    content,
    attempts,
    max_attempts: 1 + maxRetries,
  };
  if (control) r.control = control;
  return r;
}

// INBOX_PREFIX is the worker role's inbox (bus.RoleWorker.InboxPrefix()).
const INBOX_PREFIX = "_INBOX_worker";

// authenticator returns the authenticator the environment asks for, or
// undefined. A seed file that cannot be read stops the worker without
// printing the seed.
function authenticator() {
  let file = process.env.WEFT_NKEY_FILE || "";
  if (file === "" && process.env.WEFT_CREDS_DIR) file = join(process.env.WEFT_CREDS_DIR, "worker.nk");
  if (file !== "") {
    let seed;
    try {
      seed = readFileSync(file, "utf8").trim();
    } catch (err) {
      console.error(`weft js worker: nkey seed file ${file}: ${err.code || "cannot read"}`);
      process.exit(2);
    }
    return nkeyAuthenticator(new TextEncoder().encode(seed));
  }
  if (process.env.WEFT_NATS_TOKEN) return tokenAuthenticator(process.env.WEFT_NATS_TOKEN);
  return undefined;
}

const nc = await connect({ servers: url.split(","), name: `weft-js-worker ${workerId}`, inboxPrefix: INBOX_PREFIX, authenticator: authenticator() });

// running: call key -> AbortController of the call running here. Call ids
// are unique only within a run, so a call is keyed by its session, run and
// call ids.
const running = new Map();
const callKey = (session, run, call) => `${session}\u0000${run}\u0000${call}`;
// earlyCancels: call key -> when a cancel arrived for a call not running
// here. A call that arrives after its cancel is returned cancelled without
// running (docs/worker-protocol.md, Cancellation).
const earlyCancels = new Map();
const CANCEL_MEMORY_MS = 30_000;
let inflight = 0;
let allDone = null; // resolves when inflight drops to 0 while stopping

// RESERVE is what a message's subject and headers may take beside its
// body.
const RESERVE = 4096;

// publish sends report on reply within the server's max payload: a
// returned report too large for a message becomes an execution error
// saying so (this worker has no blob store to send it by reference), and
// any other report too large is dropped, so a call never goes without a
// return because its result did not fit.
function publish(reply, report) {
  let body = enc.encode(JSON.stringify(report));
  const limit = nc.info?.max_payload ?? 1024 * 1024;
  if (body.length + RESERVE > limit) {
    if (report.type !== "returned" || !report.return) {
      console.error(`weft js worker: ${report.type} report of ${body.length} bytes exceeds the bus limit; dropped`);
      return;
    }
    const r = report.return;
    const size = enc.encode(JSON.stringify(r)).length;
    const message = `tool ${JSON.stringify(r.tool_name)}: result of ${size} bytes exceeds the bus limit of ${limit} bytes, and no blob store is available to send it by reference`;
    const ret = toolReturn(r.call_id, r.tool_name, "execution", message, r.attempts, { message });
    body = enc.encode(JSON.stringify({ ...report, return: ret }));
  }
  try {
    nc.publish(reply, body);
  } catch (e) {
    console.error(`weft js worker: publish a ${report.type} report: ${e?.message ?? e}`);
  }
}

// heartbeatMs is the heartbeat interval a call's headers ask for.
function heartbeatMs(headers) {
  return Number.parseInt(headers?.get("Weft-Heartbeat-Ms") ?? "", 10) || DEFAULT_HEARTBEAT_MS;
}

// parseRequest decodes a ToolRequest body; it returns null for a body
// that is not one (the worker drops such a call).
function parseRequest(data) {
  let req;
  try {
    req = JSON.parse(dec.decode(data));
  } catch {
    return null;
  }
  if (typeof req !== "object" || req === null || typeof req.call_id !== "string") return null;
  return req;
}

// serveCall serves a call from the queue group.
async function serveCall(msg) {
  if (!msg.reply) return; // no reply subject: drop (the protocol says so)
  const req = parseRequest(msg.data);
  if (!req) return; // not a ToolRequest: drop
  await runCall(req, msg.reply, msg.headers);
}

// runCall runs the call req, reporting to reply; headers are the call's
// (Weft-Heartbeat-Ms).
async function runCall(req, reply, headers) {
  const callId = req.call_id;
  const key = callKey(String(req.session_id ?? ""), String(req.run_id ?? ""), callId);
  const name = typeof req.name === "string" ? req.name : "";
  if (running.has(key)) return; // a re-delivery of a call running here: its heartbeats cover it
  if (earlyCancels.has(key)) {
    const at = earlyCancels.get(key);
    earlyCancels.delete(key);
    if (Date.now() - at <= CANCEL_MEMORY_MS) {
      const ret = toolReturn(callId, name, "cancelled", "cancelled before it started", 0);
      publish(reply, { type: "returned", call_id: callId, tool: name, attempt: 0, return: ret });
      return;
    }
  }

  const hbMs = heartbeatMs(headers);
  const ac = new AbortController();
  running.set(key, ac);
  inflight++;
  const report = (type, extra = {}) => publish(reply, { type, call_id: callId, tool: name, ...extra });
  report("heartbeat");
  const hb = setInterval(() => report("heartbeat"), hbMs);
  try {
    const tool = tools[name];
    let ret;
    if (!tool) {
      ret = toolReturn(callId, name, "not_found", `no tool ${JSON.stringify(name)} here`, 0);
    } else {
      let args = req.arguments ?? {};
      if (req.approval && req.approval.arguments !== undefined) args = req.approval.arguments;
      if (req.arguments_blob) {
        // Arguments by reference, in a blob store this worker cannot
        // read: never run the tool with other arguments.
        const message = `tool ${JSON.stringify(name)}: the call's arguments (sha256:${req.arguments_blob.sha256}, ${req.arguments_blob.size} bytes) are in the blob store, which this worker cannot read`;
        ret = toolReturn(callId, name, "execution", message, 0, { message });
      }
      if (!ret) try {
        if (typeof args !== "object" || args === null || Array.isArray(args)) {
          throw new ToolError("invalid_arguments", "the arguments must be a JSON object");
        }
        tool.validate(args);
      } catch (e) {
        ret = toolReturn(callId, name, "invalid_arguments", e.message, 0, e.control);
      }
      if (!ret) {
        console.log(`STARTED ${workerId} ${callId}`);
        try {
          const value = await tool.run(args, ac.signal);
          ret = toolReturn(callId, name, "success", value, 1);
        } catch (e) {
          if (ac.signal.reason === "abandon") {
            ret = null; // given up while stopping: no return, the node re-delivers
          } else if (ac.signal.aborted) {
            console.log(`CANCELLED ${workerId} ${callId}`);
            // The node ignores it; sent so that the call has a return.
            ret = toolReturn(callId, name, "cancelled", "the call was cancelled", 1);
          } else if (e instanceof ToolError) {
            ret = toolReturn(callId, name, e.kind, e.message, 1, { message: e.message, ...e.control });
          } else {
            ret = toolReturn(callId, name, "execution", String(e?.message ?? e), 1);
          }
        }
      }
    }
    if (ret) {
      report("returned", { attempt: ret.attempts, return: ret });
    }
  } finally {
    clearInterval(hb);
    running.delete(key);
    inflight--;
    if (inflight === 0 && allDone) allDone();
  }
}

// Worker pools (docs/worker-protocol.md, "Worker pools").

// queueStream is the name of the pool stream of the subject root: the root
// upper-cased, "." and "-" as "_", then "_WORKER_QUEUE".
const queueStream = ROOT.toUpperCase().replace(/[.-]/g, "_") + "_WORKER_QUEUE";
// JetStream's error code for "stream name already in use" (with another
// configuration): an existing stream keeps its own.
const ERR_STREAM_NAME_IN_USE = 10058;

// joinPool creates the pool stream if absent and the pool's consumer (or
// updates it to the protocol's configuration), then starts one pull loop
// per slot.
async function joinPool() {
  const jsm = await nc.jetstreamManager();
  try {
    await jsm.streams.add({
      name: queueStream,
      description: "weft: remote tool calls waiting for a worker of their pool",
      subjects: [`${ROOT}.worker.queue.>`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.Memory,
      num_replicas: queueReplicas,
      max_age: nanos(60 * 60 * 1000),
      discard: DiscardPolicy.Old,
    });
  } catch (e) {
    if (e?.api_error?.err_code !== ERR_STREAM_NAME_IN_USE) throw e;
  }
  const durable = `pool_${pool}`;
  // Action "": create the consumer, or update it if it exists.
  await jsm.consumers.add(queueStream, {
    durable_name: durable,
    description: `weft: the workers of pool ${pool}`,
    filter_subject: `${ROOT}.worker.queue.${pool}.>`,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(POOL_ACK_WAIT_MS),
    max_deliver: -1,
    max_ack_pending: -1,
    max_waiting: 4096,
  }, "");
  const consumer = await nc.jetstream().consumers.get(queueStream, durable);
  for (let i = 0; i < concurrency; i++) {
    pullLoop(consumer).catch((e) => console.error(`weft js worker: pool ${pool}: ${e?.message ?? e}`));
  }
}

// pullLoop is one slot of a pooled worker: it pulls one call, runs it,
// and pulls the next, until the worker stops.
async function pullLoop(consumer) {
  while (!stopping) {
    let m;
    try {
      m = await consumer.next({ expires: PULL_WAIT_MS });
    } catch (e) {
      if (stopping || nc.isClosed()) return;
      // JetStream unavailable (a server restarting): try again soon.
      console.error(`weft js worker: pull a call from pool ${pool}: ${e?.message ?? e}`);
      await new Promise((resolve) => setTimeout(resolve, PULL_RETRY_MS));
      continue;
    }
    if (m) await takePooled(m);
  }
}

// takePooled takes a message pulled from the pool: a call of a tool this
// worker serves gets a first heartbeat, then is acknowledged (so that a
// worker dying in between leaves it to another), then runs as a call from
// the queue group once JetStream confirmed the acknowledgement; a call of
// another tool goes back to the pool. A call whose acknowledgement is not
// confirmed within POOL_ACK_CONFIRM_MS does not run: it is delivered again
// (by JetStream, or by the node after its heartbeat deadline), so a lost
// acknowledgement never runs one delivery twice.
async function takePooled(m) {
  const reply = m.headers?.get("Weft-Reply") ?? "";
  if (!reply) {
    m.term(); // no subject to report to: drop it, never to be delivered again
    return;
  }
  const name = unescapeToken(m.subject.slice(m.subject.lastIndexOf(".") + 1));
  if (!Object.hasOwn(tools, name)) {
    m.nak(heartbeatMs(m.headers)); // another worker of the pool serves it
    return;
  }
  if (stopping) {
    m.nak(); // taken after the stop began: for another worker
    return;
  }
  const req = parseRequest(m.data);
  if (!req) {
    m.ack(); // not a ToolRequest: drop it
    return;
  }
  publish(reply, { type: "heartbeat", call_id: req.call_id, tool: name });
  try {
    // ackAck rejects on a timeout or an error, and resolves false when it
    // sent nothing (no reply subject, or already acknowledged): either way
    // the call is not confirmed as this worker's, so it is not run.
    if (!(await m.ackAck({ timeout: POOL_ACK_CONFIRM_MS }))) {
      console.error(`weft js worker: pooled call ${m.subject} not served: its acknowledgement was not sent`);
      return;
    }
  } catch (e) {
    console.error(`weft js worker: pooled call ${m.subject} not served: its acknowledgement was not confirmed: ${e?.message ?? e}`);
    return;
  }
  await runCall(req, reply, m.headers);
}

const subs = [];
for (const name of pool === "" ? Object.keys(tools) : []) {
  const sub = nc.subscribe(`${ROOT}.worker.call.${escapeToken(name)}`, {
    queue: QUEUE,
    callback: (err, msg) => {
      if (!err) serveCall(msg);
    },
  });
  subs.push(sub);
}
subs.push(
  nc.subscribe(`${ROOT}.worker.cancel.*.*.*`, {
    callback: (err, msg) => {
      if (err) return;
      // <root>.worker.cancel.<session id>.<run id>.<call id>
      const toks = msg.subject.slice(`${ROOT}.worker.cancel.`.length).split(".");
      if (toks.length !== 3) return;
      const key = callKey(...toks.map(unescapeToken));
      const ac = running.get(key);
      if (ac) {
        ac.abort("cancel");
        return;
      }
      const now = Date.now();
      for (const [k, at] of earlyCancels) {
        if (now - at > CANCEL_MEMORY_MS) earlyCancels.delete(k);
      }
      earlyCancels.set(key, now);
    },
  }),
);
subs.push(
  nc.subscribe(`${ROOT}.worker.describe`, {
    callback: (err, msg) => {
      if (err || !msg.reply) return;
      const description = { worker_id: workerId, tools: Object.values(tools).map((t) => t.definition) };
      if (pool !== "") description.pool = pool;
      nc.publish(msg.reply, enc.encode(JSON.stringify(description)));
    },
  }),
);
// Set when a graceful stop begins.
let stopping = false;
if (pool !== "") {
  try {
    await joinPool();
  } catch (e) {
    console.error(`weft js worker: join pool ${pool} (JetStream enabled?): ${e?.message ?? e}`);
    process.exit(1);
  }
}
await nc.flush();
console.log(`READY ${workerId}`);

// A graceful stop: take no more calls (unsubscribe; a pooled worker pulls
// no more and hands back a call pulled meanwhile), let running calls end
// (up to 10 s), then abandon the rest without a return so the node
// re-delivers them.
async function stop() {
  if (stopping) return;
  stopping = true;
  for (const s of subs) s.unsubscribe();
  console.log(`STOPPING ${workerId}`);
  if (inflight > 0) {
    const drained = new Promise((resolve) => (allDone = resolve));
    const timer = setTimeout(() => {
      for (const ac of running.values()) ac.abort("abandon");
    }, 10_000);
    await drained;
    clearTimeout(timer);
  }
  await nc.drain();
}
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

// Exits when the connection closes (after stop, or when NATS goes away for good).
const err = await nc.closed();
if (err) {
  console.error(`weft js worker: ${err.message}`);
  process.exit(1);
}
