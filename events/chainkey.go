package events

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"
)

// The keyed chain. The plain hash chain (Hash, PrevHash) can be recomputed
// by anyone, so an event forged with the right PrevHash passes a plain
// check. The nodes that write the log therefore key it: every event the
// store appends carries KeyID and MAC, an HMAC-SHA256 of its Hash under a
// key only the nodes hold (ChainKey), and a Checkpoint signed with the
// key's Ed25519 half anchors the stream heads outside the log, where a
// verifier holding only the public keys (PublicKeyring) can check it.
//
// One seed makes both halves: the Ed25519 key pair (ed25519.NewKeyFromSeed)
// and the MAC key, HMAC-SHA256(seed, "weft.chain.mac.v1"). The key's id is
// the first 8 bytes of the SHA-256 of its public key, in hex.
//
// Why not an Ed25519 signature on every event: it costs ~27 µs per event
// to sign on this project's machines (~60 µs to verify), and a run of the
// runtime's benchmark case (a) appends 11 events one at a time in ~130 µs;
// the HMAC adds ~0.3–0.7 µs and one allocation per event (BenchmarkChain). The price of the choice: checking the MACs needs
// the secret key (a verifier that may check them could also forge them), so
// readers verify against a signed checkpoint instead (see Checkpoint).

// macDomain starts every MAC's input.
const macDomain = "weft.chain.mac.v1"

// ErrBadKey matches errors about chain key material: a seed of the wrong
// size, a key file that does not decode, an id that does not match its key.
var ErrBadKey = errors.New("events: bad chain key")

// ChainKey is one key of a chain keyring: the secret seed, its Ed25519
// key pair and its MAC key. It is safe for concurrent use.
type ChainKey struct {
	id      string
	seed    []byte
	priv    ed25519.PrivateKey
	pub     ed25519.PublicKey
	mac     []byte
	created time.Time
	macs    sync.Pool // of hash.Hash: HMAC-SHA256 under mac
}

// NewChainKey returns a fresh random key.
func NewChainKey() (*ChainKey, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return nil, fmt.Errorf("%w: random seed: %v", ErrBadKey, err)
	}
	return ChainKeyFromSeed(seed, time.Now().UTC())
}

// ChainKeyFromSeed returns the key of a 32-byte seed, created at created.
func ChainKeyFromSeed(seed []byte, created time.Time) (*ChainKey, error) {
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%w: seed is %d bytes, want %d", ErrBadKey, len(seed), ed25519.SeedSize)
	}
	k := &ChainKey{seed: append([]byte(nil), seed...), created: created}
	k.priv = ed25519.NewKeyFromSeed(k.seed)
	k.pub = k.priv.Public().(ed25519.PublicKey)
	k.id = KeyIDOf(k.pub)
	m := hmac.New(sha256.New, k.seed)
	m.Write([]byte(macDomain))
	k.mac = m.Sum(nil)
	k.macs.New = func() any { return hmac.New(sha256.New, k.mac) }
	return k, nil
}

// KeyIDOf returns the key id of an Ed25519 public key: the first 8 bytes of
// its SHA-256, in hex.
func KeyIDOf(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// ID returns the key's id, recorded in every event it keys.
func (k *ChainKey) ID() string { return k.id }

// PublicKey returns the Ed25519 public key that checks the key's
// checkpoints.
func (k *ChainKey) PublicKey() ed25519.PublicKey { return k.pub }

// Created returns when the key was made.
func (k *ChainKey) Created() time.Time { return k.created }

// String returns the key's id only: a key never prints its secret.
func (k *ChainKey) String() string { return "chain key " + k.id }

// Sign returns the Ed25519 signature of msg.
func (k *ChainKey) Sign(msg []byte) []byte { return ed25519.Sign(k.priv, msg) }

// appendMAC appends the hex MAC of an event whose hex Hash is hexHash:
// HMAC-SHA256 under the key of macDomain, the key id and the hash, each
// preceded by its length (8 bytes, big endian).
// s holds the buffers it reuses.
func (k *ChainKey) appendMAC(dst []byte, hexHash string, s *macScratch) []byte {
	s.in = appendLenString(s.in[:0], macDomain)
	s.in = appendLenString(s.in, k.id)
	s.in = appendLenString(s.in, hexHash)
	return k.appendSum(dst, s)
}

// appendMACBytes is appendMAC of a hash held in bytes.
func (k *ChainKey) appendMACBytes(dst, hexHash []byte, s *macScratch) []byte {
	s.in = appendLenString(s.in[:0], macDomain)
	s.in = appendLenString(s.in, k.id)
	s.in = binary.BigEndian.AppendUint64(s.in, uint64(len(hexHash)))
	s.in = append(s.in, hexHash...)
	return k.appendSum(dst, s)
}

// appendSum appends the hex HMAC of s.in under k to dst.
func (k *ChainKey) appendSum(dst []byte, s *macScratch) []byte {
	if s.key != k {
		s.release()
		s.key, s.mac = k, k.macs.Get().(hash.Hash)
	}
	s.mac.Reset()
	s.mac.Write(s.in)
	return hex.AppendEncode(dst, s.mac.Sum(s.sum[:0]))
}

// macScratch holds the buffers of appendMAC, and the HMAC of the key it
// last used: a hasher keying a batch or a log (usually all under one key)
// takes it from the key's pool once, not once per event.
type macScratch struct {
	in  []byte
	sum [sha256.Size]byte
	key *ChainKey // whose HMAC mac is; nil when none
	mac hash.Hash
}

// release gives s's HMAC back to its key's pool.
func (s *macScratch) release() {
	if s.key != nil {
		s.key.macs.Put(s.mac)
		s.key, s.mac = nil, nil
	}
}

// MAC returns the hex MAC of ev under k: what Chain stores in ev.MAC.
func (k *ChainKey) MAC(ev Event) string {
	var s macScratch
	defer s.release()
	return string(k.appendMAC(nil, Hash(ev), &s))
}

func appendLenString(b []byte, s string) []byte {
	n := uint64(len(s))
	b = append(b, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(b, s...)
}

// ChainKeys is a node's secret keyring: the current key, which keys new
// events and signs checkpoints, and the keys it replaced, which still check
// the events they keyed. Rotate adds a new current key. A ChainKeys is
// immutable and safe for concurrent use.
type ChainKeys struct {
	current *ChainKey
	keys    []*ChainKey // oldest first; the last is current
	byID    map[string]*ChainKey
}

// NewChainKeys returns a keyring holding one fresh key.
func NewChainKeys() (*ChainKeys, error) {
	k, err := NewChainKey()
	if err != nil {
		return nil, err
	}
	return newChainKeys([]*ChainKey{k})
}

// newChainKeys makes a keyring of keys, oldest first.
func newChainKeys(keys []*ChainKey) (*ChainKeys, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: a keyring needs a key", ErrBadKey)
	}
	ks := &ChainKeys{keys: keys, current: keys[len(keys)-1], byID: make(map[string]*ChainKey, len(keys))}
	for _, k := range keys {
		if ks.byID[k.id] != nil {
			return nil, fmt.Errorf("%w: key %s appears twice", ErrBadKey, k.id)
		}
		ks.byID[k.id] = k
	}
	return ks, nil
}

// Current returns the key that keys new events.
func (ks *ChainKeys) Current() *ChainKey { return ks.current }

// Key returns the key of id, or nil.
func (ks *ChainKeys) Key(id string) *ChainKey { return ks.byID[id] }

// Rotate returns a keyring with a fresh current key and every key of ks
// kept, so that the events they keyed still verify.
func (ks *ChainKeys) Rotate() (*ChainKeys, error) {
	k, err := NewChainKey()
	if err != nil {
		return nil, err
	}
	return newChainKeys(append(append([]*ChainKey(nil), ks.keys...), k))
}

// Public returns the public keyring of ks: what verifiers of checkpoints
// are given.
func (ks *ChainKeys) Public() *PublicKeyring {
	r := &PublicKeyring{byID: make(map[string]PublicKey, len(ks.keys))}
	for _, k := range ks.keys {
		p := PublicKey{ID: k.id, Key: k.pub, Created: k.created}
		r.keys = append(r.keys, p)
		r.byID[p.ID] = p
	}
	return r
}

// String names the keys only.
func (ks *ChainKeys) String() string {
	return fmt.Sprintf("chain keys (current %s, %d in all)", ks.current.id, len(ks.keys))
}

// PublicKey is the public half of a ChainKey.
type PublicKey struct {
	ID      string            `json:"id"`
	Key     ed25519.PublicKey `json:"public_key"`
	Created time.Time         `json:"created"`
}

// PublicKeyring holds the public keys that check checkpoints: the current
// key's and those of the keys it replaced.
type PublicKeyring struct {
	keys []PublicKey
	byID map[string]PublicKey
}

// Key returns the public key of id.
func (r *PublicKeyring) Key(id string) (PublicKey, bool) {
	p, ok := r.byID[id]
	return p, ok
}

// Keys returns the keys, oldest first.
func (r *PublicKeyring) Keys() []PublicKey { return append([]PublicKey(nil), r.keys...) }
