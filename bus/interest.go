package bus

import (
	"fmt"
	"unsafe"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Interest returns a function that reports whether any subscription of
// nc's account on this server (including the subscriptions other accounts
// import through it) matches a subject: what a publisher on nc would
// reach. The runtime uses it to skip the live copy of an event nobody
// listens to. nc must be connected to this server. The function keeps
// nothing of the subject it is asked about (the server's sublist walks it
// without caching it), so a caller may pass one that shares a buffer.
func (s *Server) Interest(nc *nats.Conn) (func(subject []byte) bool, error) {
	cid, err := nc.GetClientID()
	if err != nil {
		return nil, fmt.Errorf("bus: interest: client id: %w", err)
	}
	cz, err := s.srv.Connz(&server.ConnzOptions{CID: cid, Username: true})
	if err != nil || len(cz.Conns) != 1 {
		return nil, fmt.Errorf("bus: interest: connection %d not found on this server: %v", cid, err)
	}
	acc := s.srv.GlobalAccount()
	if name := cz.Conns[0].Account; name != "" {
		acc, err = s.srv.LookupAccount(name)
	}
	if err != nil {
		return nil, fmt.Errorf("bus: interest: account %q: %w", cz.Conns[0].Account, err)
	}
	// The server's sublist walks the subject without keeping it (no cache
	// entry is made), so it is read in place, not copied.
	return func(subject []byte) bool {
		return acc.Interest(unsafe.String(unsafe.SliceData(subject), len(subject))) > 0
	}, nil
}
