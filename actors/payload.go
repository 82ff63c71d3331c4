package actors

import (
	"github.com/weft-run/weft/protocol"
)

// Payloads too large for the bus. The messages of a tool call stay within
// the bus limit as package protocol says (arguments and returns by
// reference to the blob store, or an execution error saying why; see
// "Payloads too large for the bus" there). Above the runtime's limit
// (HostConfig.MaxPayloadBytes, default DefaultMaxPayloadBytes) a tool
// result becomes an execution error ("result of N bytes exceeds the limit
// of M bytes"), and a model response fails the run with
// FailPayloadTooLarge. Events take the same route through the store: Data
// above the store's inline limit goes to its blob store (see "Large
// payloads" in the events package), and an event the store refuses as too
// large (over its own limit: a model request gathering many large results,
// or any event on a store without a blob store) fails its run with
// FailPayloadTooLarge too, so that no run is left running.

// FailPayloadTooLarge is the failure kind of a run whose model response
// exceeds the runtime's payload limit, or whose events the store refused as
// too large.
const FailPayloadTooLarge = "payload_too_large"

// PayloadLimits say how large a message may be and where larger payloads
// go: protocol.PayloadLimits as a host keeps them, a type of its own (the
// two convert freely) so that it carries the host's max. The zero value
// has no bus limit, the default payload limit and no blob store.
type PayloadLimits protocol.PayloadLimits

// max is the largest tool result or arguments accepted
// (protocol.PayloadLimits.Limit).
func (l PayloadLimits) max() int { return protocol.PayloadLimits(l).Limit() }

// dataReserve is what an event's data may take beside the tool result or
// model message it carries.
const dataReserve = 4 << 10

// payloadMax is the payload limit of a host: HostConfig.MaxPayloadBytes
// (DefaultMaxPayloadBytes when zero), lowered to what the store accepts
// when it says (MaxDataBytes, less dataReserve), so that a result the store
// would refuse is a tool error rather than a failed run.
func payloadMax(cfg HostConfig) int {
	n := cfg.MaxPayloadBytes
	if n <= 0 {
		n = DefaultMaxPayloadBytes
	}
	if s, ok := cfg.Store.(interface{ MaxDataBytes() int }); ok && s.MaxDataBytes()-dataReserve > 0 {
		n = min(n, s.MaxDataBytes()-dataReserve)
	}
	return n
}
