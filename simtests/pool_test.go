package simtests

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/weft-run/weft/actors"
	"github.com/weft-run/weft/bus"
	"github.com/weft-run/weft/events"
)

// poolStreamInfo returns the information of the pool stream (its leader,
// replicas and messages) as the cluster reports it now.
func (c *client) poolStreamInfo(ctx context.Context) (*natsjs.StreamInfo, error) {
	return c.streamInfo(ctx, actors.WorkerQueueStream(bus.Default))
}

// streamInfo returns the information of stream name.
func (c *client) streamInfo(ctx context.Context, name string) (*natsjs.StreamInfo, error) {
	js, err := natsjs.New(c.nc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	return st.Info(ctx)
}

// streamsLedBy returns the streams whose leader is server.
func (c *client) streamsLedBy(ctx context.Context, server string) ([]string, error) {
	js, err := natsjs.New(c.nc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	lister := js.ListStreams(ctx)
	var led []string
	for info := range lister.Info() {
		if info.Cluster != nil && info.Cluster.Leader == server {
			led = append(led, info.Config.Name)
		}
	}
	return led, lister.Err()
}

// ledBy is streamsLedBy for a log line: an error is reported in the list.
func (c *client) ledBy(ctx context.Context, server string) []string {
	led, err := c.streamsLedBy(ctx, server)
	if err != nil {
		led = append(led, "(list streams: "+err.Error()+")")
	}
	return led
}

// names returns the names of the servers.
func (c *cluster) names() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.name
	}
	return out
}

// serverIndex returns the index of the NATS server named name.
func (c *cluster) serverIndex(name string) (int, error) {
	for i, n := range c.nodes {
		if n.name == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no NATS server is named %q", name)
}

// moveLeadersOff makes every stream but keep whose leader is server
// elect another leader (a leader stepdown with another server preferred),
// and waits until none of them is led by server.
func (c *client) moveLeadersOff(ctx context.Context, server, keep string, servers []string) error {
	other := servers[0]
	if other == server {
		other = servers[1]
	}
	req, err := json.Marshal(map[string]any{"placement": map[string]string{"preferred": other}})
	if err != nil {
		return err
	}
	return retry(ctx, func(ctx context.Context) error {
		led, err := c.streamsLedBy(ctx, server)
		if err != nil {
			return err
		}
		led = slices.DeleteFunc(led, func(name string) bool { return name == keep })
		for _, name := range led {
			rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := c.nc.RequestWithContext(rctx, "$JS.API.STREAM.LEADER.STEPDOWN."+name, req)
			cancel()
			if err != nil {
				return fmt.Errorf("step down the leader of %s: %w", name, err)
			}
		}
		if len(led) > 0 {
			return fmt.Errorf("%s leads streams %v", server, led)
		}
		return nil
	})
}

// publishedCalls records the messages the nodes publish into the pool
// stream: for each message id (Nats-Msg-Id), the reply subjects
// (Weft-Reply) of the publishes that carried it.
type publishedCalls struct {
	mu      sync.Mutex
	replies map[string][]string
}

// watchPublished records the calls the nodes publish into the pool
// stream of d (nothing for the queue group) until the test ends.
func (s *sim) watchPublished(d dispatch) *publishedCalls {
	s.t.Helper()
	p := &publishedCalls{replies: map[string][]string{}}
	if d.pool == "" {
		return p
	}
	sub, err := s.c.nc.Subscribe(bus.Default.Root()+".worker.queue."+d.pool+".>", func(m *nats.Msg) {
		id, reply := m.Header.Get(natsjs.MsgIDHeader), m.Header.Get(actors.HeaderReply)
		p.mu.Lock()
		defer p.mu.Unlock()
		if !slices.Contains(p.replies[id], reply) {
			p.replies[id] = append(p.replies[id], reply)
		}
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := s.c.nc.Flush(); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// check fails the test for each message id that was published for two
// reply subjects, that is by two schedulers (two nodes, or one node
// twice): JetStream stores the first and acknowledges the others as
// duplicates without storing them, so the later scheduler's call never
// reaches a worker, and the reports of the stored one go to the earlier
// scheduler.
func (p *publishedCalls) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, replies := range p.replies {
		if len(replies) > 1 {
			t.Errorf("message id %s was published into the pool stream for %d reply subjects %v: the stream stores only the first", id, len(replies), replies)
		}
	}
}

// poolSessions is how many sessions TestRestartPoolStreamLeader runs at
// once: three times the slots of its two workers (one call at a time
// each), so that most deploys wait in the pool stream.
const poolSessions = 6

// Pooled workers that run one call at a time are all busy with approved
// deploys while the deploys of more sessions wait in the pool stream
// (three replicas, in memory); the NATS server that leads the stream is
// killed and started again on its store. The waiting calls survive on the
// other replicas: every session completes, each deploy ran exactly once
// (no worker died) under its session's ids, and the logs check out.
func TestRestartPoolStreamLeader(t *testing.T) {
	h := newHarness(t)
	s, dir, _ := startSimWorkers(h, workerOpts{deploy: 1500 * time.Millisecond, pool: simPool, concurrency: 1})
	ctx := s.ctx
	sessions := sessionIDs("pool-restart", poolSessions)
	s.spreadWaiting(sessions)
	before := s.snapshot(sessions)
	// Watch the deliveries of deploy the nodes publish into the stream.
	var (
		dmu        sync.Mutex
		deliveries = map[string][]string{} // session → the Weft-Delivery of each
		published  = map[string]bool{}     // the message ids seen
	)
	sub, err := s.c.nc.Subscribe(pooled.callSubject(t, "deploy"), func(m *nats.Msg) {
		var req actors.ToolRequest
		if json.Unmarshal(m.Data, &req) != nil {
			return
		}
		dmu.Lock()
		defer dmu.Unlock()
		// A publish tried again (its acknowledgement lost in the
		// restart) carries its delivery's message id: the stream
		// stores it once. Count each message id once.
		if id := m.Header.Get(natsjs.MsgIDHeader); !published[id] {
			published[id] = true
			deliveries[req.SessionID] = append(deliveries[req.SessionID], m.Header.Get(actors.HeaderDelivery))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := s.c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	approved := s.approveAll(sessions)

	// Wait until both workers run a deploy and calls wait in the stream.
	// The fault is the pool stream's: the streams of the event log and
	// the lease bucket are led elsewhere (the loss of their leader, which
	// TestRestartNATSNode inflicts, outlasts the lease TTL: the sessions
	// are driven again and their calls sent again, executions the at-least-once rule
	// allows but this test does not look for).
	var (
		info    *natsjs.StreamInfo
		running []string
	)
	for moved := ""; ; {
		if err := retry(ctx, func(ctx context.Context) error {
			byS, _, err := readEffects(dir)
			if err != nil {
				return err
			}
			running = running[:0]
			for _, id := range sessions {
				if len(byS[id]) > 0 {
					running = append(running, id)
				}
			}
			if len(running) < 2 {
				return fmt.Errorf("deploy runs in sessions %v only", running)
			}
			if info, err = s.c.poolStreamInfo(ctx); err != nil {
				return err
			}
			if info.State.Msgs == 0 {
				return fmt.Errorf("no call waits in the pool stream while deploy runs in sessions %v", running)
			}
			if info.Config.Replicas != 3 || info.Cluster == nil || info.Cluster.Leader == "" {
				return fmt.Errorf("pool stream: %d replicas, cluster %+v; want 3 replicas and a leader", info.Config.Replicas, info.Cluster)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if info.Cluster.Leader == moved {
			break
		}
		moved = info.Cluster.Leader
		if err := s.c.moveLeadersOff(ctx, moved, info.Config.Name, s.nats.names()); err != nil {
			t.Fatal(err)
		}
	}
	leader, err := s.nats.serverIndex(info.Cluster.Leader)
	if err != nil {
		t.Fatal(err)
	}
	waited := slices.DeleteFunc(slices.Clone(sessions), func(id string) bool { return slices.Contains(running, id) })
	if len(waited) == 0 {
		t.Fatalf("deploy started in every session (%v) before the restart: none waits through it", running)
	}
	t.Logf("restarting %s, the pool stream's leader, with %d calls waiting (deploy runs in %v)", info.Cluster.Leader, info.State.Msgs, running)
	if err := s.nats.restart(leader); err != nil {
		t.Fatalf("restart %s: %v", info.Cluster.Leader, err)
	}

	logs := s.awaitAll(sessions, events.TypeRunCompleted, approved)
	effs, _, err := readEffects(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range sessions {
		recorded := recordedDeploy(t, id, logs[id], approved[id])
		// No worker died: every deploy ran once.
		checkDeploys(t, id, effs[id], recorded, "", 1)
	}
	// The calls that waited were not lost with the leader: the nodes
	// found them in the stream and did not send them again.
	dmu.Lock()
	for _, id := range waited {
		if !slices.Equal(deliveries[id], []string{"1"}) {
			t.Errorf("session %s: deploy waited through the restart and was published as deliveries %v, want [1]", id, deliveries[id])
		}
	}
	dmu.Unlock()
	s.c.checkLog(ctx, sessions, before)
}
