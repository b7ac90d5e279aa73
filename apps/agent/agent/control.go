package agent

import (
	"sync"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// framingBytes is NATS's framing per message (verb, sid, sizes, CRLFs), counted in control bytes.
const framingBytes = 20

// controlBytes counts control-plane bytes sent and received per message type (MetricsReport.ctl).
type controlBytes struct {
	mu     sync.Mutex
	counts map[string]*[2]int64
}

func (c *controlBytes) add(messageType string, direction int, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]*[2]int64{}
	}
	entry := c.counts[messageType]
	if entry == nil {
		entry = &[2]int64{}
		c.counts[messageType] = entry
	}
	entry[direction] += int64(bytes)
}

func (c *controlBytes) sent(messageType string, bytes int)     { c.add(messageType, 0, bytes) }
func (c *controlBytes) received(messageType string, bytes int) { c.add(messageType, 1, bytes) }

// snapshot lists the types seen so far, in the protocol's order of types.
func (c *controlBytes) snapshot() []protocol.ControlCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []protocol.ControlCount{}
	for _, messageType := range protocol.ControlMessageTypes {
		if entry := c.counts[messageType]; entry != nil {
			out = append(out, protocol.ControlCount{Type: messageType, Sent: entry[0], Received: entry[1]})
		}
	}
	return out
}
