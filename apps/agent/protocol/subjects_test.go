package protocol

import "testing"

// nodeAddress.json is the TypeScript tests' file too (packages/agent-sdk/test/subjects.test.ts):
// both agents read the same address from the same credentials and build the same subjects.
type addressVector struct {
	Name    string `json:"name"`
	JWT     string `json:"jwt"`
	Address *struct {
		Wid  string  `json:"wid"`
		Site *string `json:"site"`
		Down *string `json:"down"`
	} `json:"address"`
	Subjects map[string]string `json:"subjects"`
}

func TestAddressVectors(t *testing.T) {
	var vectors []addressVector
	readVectors(t, "nodeAddress.json", &vectors)
	if len(vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			address, err := AddressFromJWT(v.JWT)
			if v.Address == nil {
				if err == nil {
					t.Fatalf("got address %+v, want none", address)
				}
				return
			}
			if err != nil {
				t.Fatalf("no address: %v", err)
			}
			want := Address{Wid: v.Address.Wid}
			if v.Address.Site != nil {
				want.Site, want.Down = *v.Address.Site, *v.Address.Down
			}
			if address != want {
				t.Fatalf("address %+v, want %+v", address, want)
			}
			for name, got := range map[string]string{
				"hello": address.UpSubject(UpHello),
				"st":    address.UpSubject(UpSt),
				"down":  address.DownSubject(),
				"inbox": address.InboxPrefix(),
			} {
				if got != v.Subjects[name] {
					t.Errorf("%s: %q, want %q", name, got, v.Subjects[name])
				}
			}
		})
	}
}

func TestDownlinkMessageType(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  Message
		want MessageType
	}{
		{"a command", CommandRequest{ID: "x", Cmd: "diag"}, TypeCommandRequest},
		{"new credentials", CredentialsUpdate{JWT: "a.b.c"}, TypeCredentialsUpdate},
		{"a delta", DesiredDelta{DeltaBody{From: 0, To: 1}}, TypeDesiredDelta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := Encode(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if got := DownlinkMessageType(data); got != tc.want {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
	if got := DownlinkMessageType([]byte{0xc1}); got != TypeDesiredDelta {
		t.Fatalf("garbage: %s", got)
	}
}
