package control

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	nids := []string{"n1", "n2"}
	none := []string{}
	tests := []struct {
		name string
		line string
		want Command
		// err is a part of the error's text; unsupported: errors.Is ErrUnsupported.
		err         string
		unsupported bool
	}{
		{name: "enroll for site leaves", line: `{"type":"enroll","firstIndex":10,"count":5,"token":"t0","natsUrl":"nats://h:1","agentUrls":["nats://l0:1","nats://l1:1"],"agentTokens":["a","b"],"enrollCreds":"creds","namePrefix":"scale","concurrency":16}`,
			want: Enroll{FirstIndex: 10, Count: 5, Token: "t0", NatsURL: "nats://h:1", AgentURLs: []string{"nats://l0:1", "nats://l1:1"}, AgentTokens: []string{"a", "b"}, EnrollCreds: "creds", NamePrefix: "scale", Concurrency: 16}},
		{name: "enroll with a status refresh", line: `{"type":"enroll","count":1,"token":"t","natsUrl":"nats://h:1","namePrefix":"p","concurrency":1,"statusRefreshSeconds":30}`,
			want: Enroll{Count: 1, Token: "t", NatsURL: "nats://h:1", NamePrefix: "p", Concurrency: 1, StatusRefreshSeconds: 30}},
		{name: "enroll without a server", line: `{"type":"enroll","count":1,"token":"t","namePrefix":"p","concurrency":1}`, err: "natsUrl is required"},
		{name: "enroll without a token", line: `{"type":"enroll","count":1,"natsUrl":"nats://h:1","namePrefix":"p","concurrency":1}`, err: "token or agentTokens"},
		{name: "enroll with a negative count", line: `{"type":"enroll","count":-1,"token":"t","natsUrl":"nats://h:1","namePrefix":"p","concurrency":1}`, err: "must not be negative"},
		{name: "enroll without concurrency", line: `{"type":"enroll","count":1,"token":"t","natsUrl":"nats://h:1","namePrefix":"p"}`, err: "concurrency must be at least 1"},
		{name: "enroll with a count of the wrong type", line: `{"type":"enroll","count":"1"}`, err: "control.Enroll"},
		{name: "enroll fetching artifacts", line: `{"type":"enroll","count":1,"token":"t","natsUrl":"nats://h:1","namePrefix":"p","concurrency":1,"fetchArtifacts":true}`, err: "fetchArtifacts", unsupported: true},
		{name: "enroll with app models", line: `{"type":"enroll","count":1,"token":"t","natsUrl":"nats://h:1","namePrefix":"p","concurrency":1,"appModels":true}`, err: "appModels", unsupported: true},
		{name: "connect", line: `{"type":"connect","perSecond":12.5,"maxInFlight":64}`, want: Connect{PerSecond: 12.5, MaxInFlight: 64}},
		{name: "connect at no rate", line: `{"type":"connect","perSecond":0,"maxInFlight":64}`, err: "perSecond must be above 0"},
		{name: "connect with no slot", line: `{"type":"connect","perSecond":1}`, err: "maxInFlight at least 1"},
		{name: "stop", line: `{"type":"stop","nids":["n1","n2"]}`, want: Stop{Nids: nids}},
		{name: "restart", line: `{"type":"restart","nids":["n1","n2"]}`, want: Restart{Nids: nids}},
		{name: "watch every running agent", line: `{"type":"watch-hellos","timeoutMs":60000}`, want: WatchHellos{TimeoutMs: 60000}},
		{name: "watch some", line: `{"type":"watch-hellos","timeoutMs":1,"nids":["n1","n2"]}`, want: WatchHellos{TimeoutMs: 1, Nids: &nids}},
		{name: "watch none", line: `{"type":"watch-hellos","timeoutMs":1,"nids":[]}`, want: WatchHellos{TimeoutMs: 1, Nids: &none}},
		{name: "watch for a negative time", line: `{"type":"watch-hellos","timeoutMs":-1}`, err: "timeoutMs must not be negative"},
		{name: "shutdown", line: `{"type":"shutdown"}`, want: Shutdown{}},
		{name: "behaviours", line: `{"type":"behaviours","table":{}}`, err: "behaviours", unsupported: true},
		{name: "updates", line: `{"type":"updates"}`, err: "updates", unsupported: true},
		{name: "deliveries", line: `{"type":"deliveries"}`, err: "deliveries", unsupported: true},
		{name: "unknown type", line: `{"type":"reboot"}`, err: `unknown command type "reboot"`},
		{name: "no type", line: `{"nids":[]}`, err: `without a "type"`},
		{name: "not JSON", line: `stop n1`, err: "not a JSON command"},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			got, err := Parse([]byte(test.line))
			if test.err != "" {
				if err == nil || !strings.Contains(err.Error(), test.err) {
					t.Fatalf("error %v, want one with %q", err, test.err)
				}
				if errors.Is(err, ErrUnsupported) != test.unsupported {
					t.Fatalf("error %v: unsupported %v, want %v", err, !test.unsupported, test.unsupported)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, test.want) {
				t.Fatalf("got %#v, want %#v", got, test.want)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name  string
		reply Reply
		want  string
	}{
		{"ready", Ready{}, `{"type":"ready"}`},
		{"progress", Progress{Enrolled: 3, Started: 2, Connected: 1, Backlog: 4, Delivered: 5}, `{"type":"progress","enrolled":3,"started":2,"connected":1,"backlog":4,"delivered":5}`},
		{"enrolled", Enrolled{Nodes: []NodeName{{Nid: "n1", Name: "p-0"}}, Failures: 1, FirstError: "p-1: rejected"}, `{"type":"enrolled","nodes":[{"nid":"n1","name":"p-0"}],"failures":1,"firstError":"p-1: rejected"}`},
		{"enrolled, no error", Enrolled{Nodes: []NodeName{}}, `{"type":"enrolled","nodes":[],"failures":0}`},
		{"started", Started{Nodes: []NodeTime{{Nid: "n1", At: 1700000000000}}}, `{"type":"started","nodes":[{"nid":"n1","at":1700000000000}]}`},
		{"stopped", Stopped{Nodes: []NodeTime{}}, `{"type":"stopped","nodes":[]}`},
		{"restarted", Restarted{Nodes: []NodeTime{{Nid: "n1", At: 1}}}, `{"type":"restarted","nodes":[{"nid":"n1","at":1}]}`},
		{"hellos", Hellos{Nodes: []NodeTime{}, Watched: 2}, `{"type":"hellos","nodes":[],"watched":2}`},
		{"error", Error{Message: "a \"quoted\"\nline"}, `{"type":"error","message":"a \"quoted\"\nline"}`},
	}
	for _, test := range tests {
		t.Run(test.name, func(t *testing.T) {
			line, err := Encode(test.reply)
			if err != nil {
				t.Fatal(err)
			}
			if string(line) != test.want+"\n" {
				t.Fatalf("got %s, want %s", line, test.want)
			}
		})
	}
}
