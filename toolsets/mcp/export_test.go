package mcp

// ServerPID returns the process id of the stdio server of runID's
// session, 0 when there is none.
func ServerPID(ts *Toolset, runID string) int {
	c := ts.connFor(runID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.d == nil || c.d.cmd == nil || c.d.cmd.Process == nil {
		return 0
	}
	return c.d.cmd.Process.Pid
}
