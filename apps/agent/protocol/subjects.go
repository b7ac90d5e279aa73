package protocol

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Subjects of the edge protocol, agent's view (docs/protocol.md "Subjects"), subject layout 2: the
// node's own `ef.up.<site>.<wid>.<type>` up, `ef.down.<site>.<wid>.<token>` down, replies on
// `_INBOX.<site>.<wid>.…`. The site token keeps a site's leaf credentials to that site's nodes; the
// downlink token (derived by the gateway) keeps every other node from naming the downlink. Layout
// 1 (`ef.up.<wid>.<type>`, `ef.down.<wid>`, `_INBOX.<wid>`) is what nodes enrolled before hold
// until their first Hello gives them new credentials. The address comes from the node's own JWT.

// EnrollSubject is where enrollment requests go (ENROLL account).
const EnrollSubject = "ef.enroll"

// Up message types (the last token of an up subject).
const (
	UpHello = "hello"
	UpHb    = "hb"
	UpSt    = "st"
	UpMx    = "mx"
	UpAck   = "ack"
	UpArt   = "art"
	// UpCmd carries command replies (core publish); requests come down on DownSubject.
	UpCmd = "cmd"
	// UpPrb carries a hub probe's chunks (request/reply, answered by the gateway that asked).
	UpPrb = "prb"
	// UpSink carries a leaf probe's chunks: nobody subscribes, the leaf server drops them.
	UpSink = "sink"
)

// DurableUpTypes go through JetStream (stream EF_UP), buffered in the outbox while offline.
var DurableUpTypes = []string{UpSt, UpMx, UpAck}

var (
	wireIDPattern        = regexp.MustCompile(`^[0-9a-z]{1,20}$`)
	siteTokenPattern     = regexp.MustCompile(`^_[0-9a-z]{0,20}$`)
	downlinkTokenPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)
)

// IsWireID tells whether s is a wire id (node or organization): [0-9a-z]{1,20}.
func IsWireID(s string) bool { return wireIDPattern.MatchString(s) }

// IsSiteToken tells whether s is a site token: `_` + a site's wire id, or `_` for no site.
func IsSiteToken(s string) bool { return siteTokenPattern.MatchString(s) }

// Address is where a node is on the wire: the subjects its credentials allow. Site and Down are
// empty in layout 1.
type Address struct {
	Wid  string
	Site string
	Down string
}

// Layout1 tells whether the address is of credentials issued before subjects named the site.
func (a Address) Layout1() bool { return a.Site == "" }

func (a Address) tokens() string {
	if !IsWireID(a.Wid) {
		panic(fmt.Sprintf("invalid node wire id %q: want [0-9a-z]{1,20}", a.Wid))
	}
	if (a.Site == "") != (a.Down == "") || a.Site != "" && (!IsSiteToken(a.Site) || !downlinkTokenPattern.MatchString(a.Down)) {
		panic(fmt.Sprintf("invalid node address %+v", a))
	}
	if a.Layout1() {
		return a.Wid
	}
	return a.Site + "." + a.Wid
}

// UpSubject is `ef.up.<site>.<wid>.<type>` (layout 1: `ef.up.<wid>.<type>`).
func (a Address) UpSubject(upType string) string { return "ef.up." + a.tokens() + "." + upType }

// DownSubject is `ef.down.<site>.<wid>.<token>` (layout 1: `ef.down.<wid>`): DesiredDelta,
// CommandRequest and CredentialsUpdate (see DownlinkMessageType).
func (a Address) DownSubject() string {
	if a.Layout1() {
		return "ef.down." + a.tokens()
	}
	return "ef.down." + a.tokens() + "." + a.Down
}

// InboxPrefix is the node connection's inbox prefix: its user may subscribe only below it.
func (a Address) InboxPrefix() string { return "_INBOX." + a.tokens() }

// AddressFromJWT reads the address a node user JWT's permissions name: the publish permission
// `ef.up.<site>.<wid>.>` (layout 1: `ef.up.<wid>.>`) and, in layout 2, the subscribe permission
// `ef.down.<site>.<wid>.<token>`. The signature is the server's to check; this only reads.
func AddressFromJWT(jwt string) (Address, error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return Address{}, fmt.Errorf("the user JWT is malformed")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return Address{}, fmt.Errorf("the user JWT is malformed: %w", err)
	}
	var claims struct {
		Nats struct {
			Pub struct {
				Allow []string `json:"allow"`
			} `json:"pub"`
			Sub struct {
				Allow []string `json:"allow"`
			} `json:"sub"`
		} `json:"nats"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return Address{}, fmt.Errorf("the user JWT is malformed: %w", err)
	}
	for _, subject := range claims.Nats.Pub.Allow {
		tokens := strings.Split(subject, ".")
		if len(tokens) < 4 || tokens[0] != "ef" || tokens[1] != "up" || tokens[len(tokens)-1] != ">" {
			continue
		}
		if len(tokens) == 4 && IsWireID(tokens[2]) {
			return Address{Wid: tokens[2]}, nil
		}
		if len(tokens) != 5 || !IsSiteToken(tokens[2]) || !IsWireID(tokens[3]) {
			continue
		}
		site, wid := tokens[2], tokens[3]
		prefix := "ef.down." + site + "." + wid + "."
		for _, allowed := range claims.Nats.Sub.Allow {
			if down, ok := strings.CutPrefix(allowed, prefix); ok && downlinkTokenPattern.MatchString(down) {
				return Address{Wid: wid, Site: site, Down: down}, nil
			}
		}
		return Address{}, fmt.Errorf("the user JWT allows %s but no downlink of that node", subject)
	}
	return Address{}, fmt.Errorf("the user JWT allows no ef.up.<site>.<wid>.> subject")
}
