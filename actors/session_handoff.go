package actors

// exitHandedOff exits the toolsets of the agent that handed run r over
// (run.handoff) before the shell forgets its facts: their closed reports
// are recorded, and the run goes on with the new agent's toolsets, which
// its next preparation enters. The run's own attached toolsets stay.
func (a *sessionActor) exitHandedOff(r *RunState) {
	m := a.run
	if m == nil || m.id != r.ID || m.spec.Name == r.Agent || !m.prepared || a.life == nil || len(m.spec.lifecycles) == 0 {
		return
	}
	m.prepared = false
	tc := a.toolsetContext(m, r.Step)
	a.exits++
	a.h.system.Root.RequestWithCustomSender(a.life, &exitRequest{lcs: m.spec.lifecycles, tc: tc, handoff: true}, a.self)
}
