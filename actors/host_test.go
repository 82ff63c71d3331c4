package actors

import "testing"

// newTestHost starts a host on cfg, closed when the test ends.
func newTestHost(t testing.TB, cfg HostConfig) *Host {
	t.Helper()
	h, err := NewHost(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close() })
	return h
}
