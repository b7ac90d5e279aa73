package metrics

import (
	"math/rand/v2"

	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

// Synthetic gives plausible, slowly moving numbers for hollow agents (no /proc reads: thousands
// share one host).
type Synthetic struct{ rx, tx int64 }

// Sample returns a made-up host sample.
func (s *Synthetic) Sample() (HostSample, error) {
	const gib = 1 << 30
	s.rx += rand.Int64N(100_000)
	s.tx += rand.Int64N(20_000)
	return HostSample{
		CPU: rand.Int64N(300), Mu: gib + rand.Int64N(gib), Mt: 4 * gib, Du: 10 * gib, Dt: 32 * gib,
		Net: []protocol.NetInterface{{If: "eth0", Rx: s.rx, Tx: s.tx}},
	}, nil
}
