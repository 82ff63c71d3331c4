package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/weft-run/weft/bus"
)

// nodeIDFile is the file of a data directory that keeps the id of the node
// serving it: its id in the session leases.
const nodeIDFile = "node-id"

// errBadNodeID: the data directory's node id file does not hold a node id.
var errBadNodeID = errors.New("not a node id")

// dataDirNodeID returns the node id kept in the data directory dir,
// writing a random one there first if it has none.
//
// weft serve on its embedded server listens for other weft processes, so
// its runtime is a node of a cluster that leases the sessions it drives
// (see "Ownership" in the actors package doc). A node killed without
// releasing its leases (SIGKILL, a crash, a power loss) keeps them until
// their TTL ends; restarted on the same data directory under a new id it
// would drive none of those sessions meanwhile: its commands would be
// refused session_owned and Recover would leave their running runs alone.
// Under the kept id the restarted process is the same node: it holds those
// leases still and acts on those sessions at once. One process serves a
// data directory at a time (its nats-server's file store is the event
// log), so no two live nodes share the id.
func dataDirNodeID(dir string) (string, error) {
	path := filepath.Join(dir, nodeIDFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		id := strings.TrimSpace(string(b))
		if !bus.ValidToken(id) {
			return "", fmt.Errorf("the node id in %s: %q is %w (a NATS subject token; remove the file to pick a new one)", path, id, errBadNodeID)
		}
		return id, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("read the node id: %w", err)
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	id := "node-" + hex.EncodeToString(r[:])
	// Written aside, then renamed: a crash leaves the whole id or none.
	tmp, err := os.CreateTemp(dir, nodeIDFile+".*")
	if err != nil {
		return "", fmt.Errorf("keep the node id: %w", err)
	}
	_, err = tmp.WriteString(id + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", fmt.Errorf("keep the node id: %w", err)
	}
	return id, nil
}
