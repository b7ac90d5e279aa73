package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
)

// The vectors are the TypeScript tests' own files: one set of bytes for both languages, so a
// protocol change that one side misses fails a test.
var vectorsDir = filepath.Join("..", "..", "..", "packages", "agent-sdk", "src", "protocol", "vectors")

type vector struct {
	Name string          `json:"name"`
	Msg  json.RawMessage `json:"msg"`
	Hex  string          `json:"hex"`
}

func readVectors(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, file))
	if err != nil {
		t.Fatalf("read vectors: %v", err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
}

func TestVectorsDecodeAndEncodeByteForByte(t *testing.T) {
	for _, messageType := range MessageTypes {
		var vectors []vector
		readVectors(t, string(messageType)+".json", &vectors)
		if len(vectors) == 0 {
			t.Fatalf("%s: no vectors", messageType)
		}
		for _, v := range vectors {
			t.Run(string(messageType)+"/"+v.Name, func(t *testing.T) {
				pinned, err := hex.DecodeString(v.Hex)
				if err != nil {
					t.Fatalf("hex: %v", err)
				}
				msg, err := Decode(messageType, pinned)
				if err != nil {
					t.Fatalf("pinned bytes do not decode: %v", err)
				}
				encoded, err := Encode(msg)
				if err != nil {
					t.Fatalf("decoded message does not encode: %v", err)
				}
				if !bytes.Equal(encoded, pinned) {
					t.Fatalf("re-encoded bytes differ\n got %x\nwant %s", encoded, v.Hex)
				}
				// The vector's object is the message: its tree (JSON key order) is the decoded one.
				tree, err := jsonTree(v.Msg)
				if err != nil {
					t.Fatalf("vector msg: %v", err)
				}
				fromObject, err := encodeTree(tree)
				if err != nil {
					t.Fatalf("encode vector msg: %v", err)
				}
				if !bytes.Equal(fromObject, pinned) {
					t.Fatalf("vector object encodes differently\n got %x\nwant %s", fromObject, v.Hex)
				}
				if got, want := fmt.Sprint(msg.toMap()), fmt.Sprint(tree); got != want {
					t.Fatalf("decoded message differs from the vector object\n got %s\nwant %s", got, want)
				}
			})
		}
	}
}

// A message type the TypeScript side adds (a new vector file) must be known here too.
func TestEveryVectorFileIsAMessageTypeOfThisCodec(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vectorsDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vector files in %s: %v", vectorsDir, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		// invalid: bad payloads; nodeAddress: subjects (subjects_test.go); *.keys: test keys.
		if name == "invalid" || name == "nodeAddress" || strings.HasSuffix(name, ".keys") {
			continue
		}
		if _, known := readers[MessageType(name)]; !known {
			t.Errorf("vector file %s.json names a message type the Go codec does not have", name)
		}
	}
}

type invalidVector struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Hex       string `json:"hex"`
	HexRepeat *struct {
		Hex   string `json:"hex"`
		Times int    `json:"times"`
	} `json:"hexRepeat"`
	Reason string `json:"reason"`
}

func TestInvalidVectorsRefusedWithTheSameReason(t *testing.T) {
	var vectors []invalidVector
	readVectors(t, "invalid.json", &vectors)
	for _, v := range vectors {
		t.Run(v.Name, func(t *testing.T) {
			text := v.Hex
			if v.HexRepeat != nil {
				text = strings.Repeat(v.HexRepeat.Hex, v.HexRepeat.Times)
			}
			data, err := hex.DecodeString(text)
			if err != nil {
				t.Fatalf("hex: %v", err)
			}
			_, err = Decode(MessageType(v.Type), data)
			var refused *DecodeError
			if !errors.As(err, &refused) {
				t.Fatalf("want a refusal (%s), got %v", v.Reason, err)
			}
			if string(refused.Reason) != v.Reason || refused.Detail == "" {
				t.Fatalf("reason %s (%s), want %s", refused.Reason, refused.Detail, v.Reason)
			}
		})
	}
}

func TestInvalidMessageNamesTheField(t *testing.T) {
	// The TypeScript test's hand-built report whose instance has an unknown state.
	data, _ := hex.DecodeString("84a17601a37365710ba2617401a4696e73749183a3617070a161a27374a4646f6e65a2727300")
	_, err := Decode(TypeStatusReport, data)
	var refused *DecodeError
	if !errors.As(err, &refused) || refused.Reason != ReasonInvalid || !strings.Contains(refused.Detail, "inst.0.st") {
		t.Fatalf("want invalid naming inst.0.st, got %v", err)
	}
	// An approved enrollment body without credentials.
	data, _ = hex.DecodeString("82a17601a27374a8617070726f766564")
	if _, err := Decode(TypeEnrollReplyBody, data); !isReason(err, ReasonInvalid) {
		t.Fatalf("approved body without credentials: %v", err)
	}
}

func TestEncodeRefusesSenderBugs(t *testing.T) {
	cases := []struct {
		name string
		msg  Message
		want string
	}{
		{"empty agent version", Hello{Av: "", OS: "linux", Arch: "x64", Boot: "b"}, "av"},
		{"negative heartbeat", Heartbeat{S: -1}, "s"},
		{"revision past int4", DesiredAck{Rev: Int4Max + 1}, "rev"},
		{"report over its size limit", bigStatusReport(), "limit"},
		{"health check with both exec and http", DesiredDelta{DeltaBody{From: 1, To: 2, Put: []DesiredPut{{
			App: "a", Ver: "1", Spec: RunSpec{Command: []string{"x"}, Health: &HealthCheck{Exec: []string{"true"}, HTTP: "http://x/"}},
		}}}}, "exactly one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Encode(c.msg)
			var bug *EncodeError
			if !errors.As(err, &bug) || !strings.Contains(bug.Detail, c.want) {
				t.Fatalf("want an EncodeError mentioning %q, got %v", c.want, err)
			}
		})
	}
}

func bigStatusReport() StatusReport {
	report := StatusReport{Seq: 1}
	why := strings.Repeat("y", 200)
	for i := range 512 {
		report.Inst = append(report.Inst, InstanceStatus{App: fmt.Sprintf("app-%d-%s", i, strings.Repeat("x", 100)), St: StateFailed, Why: &why})
	}
	return report
}

func TestRandomGarbageNeverPanics(t *testing.T) {
	random := rand.New(rand.NewPCG(7, 7))
	for _, messageType := range MessageTypes {
		for range 2000 {
			data := make([]byte, random.IntN(80))
			for i := range data {
				data[i] = byte(random.IntN(256))
			}
			if _, err := Decode(messageType, data); err != nil {
				var refused *DecodeError
				if !errors.As(err, &refused) {
					t.Fatalf("%s: unclassified error %v", messageType, err)
				}
			}
		}
	}
}

func TestHostileLengthsAreRefusedCheaply(t *testing.T) {
	cases := map[string]string{
		"array32 claiming 4 billion items": "dbffffffff",
		"map32 claiming 4 billion entries": "dfffffffff",
		"str32 claiming 4 GiB":             "dbffffffff",
		"bin32 claiming 4 GiB":             "c6ffffffff",
		"deeply nested arrays":             strings.Repeat("91", 60) + "00",
	}
	for name, text := range cases {
		data, _ := hex.DecodeString(text)
		if _, err := Decode(TypeDesiredDelta, data); err == nil {
			t.Fatalf("%s: accepted", name)
		}
	}
}

func TestSealedEnrollmentVectorsWithTheTestKeys(t *testing.T) {
	var keys struct {
		NodeSeed  string `json:"nodeSeed"`
		CurveSeed string `json:"curveSeed"`
	}
	readVectors(t, "enrollReply.keys.json", &keys)

	// The request's proof of possession: Ed25519 is deterministic, so we sign to the same bytes.
	var requests []vector
	readVectors(t, "enrollRequest.json", &requests)
	node, err := nkeys.FromSeed([]byte(keys.NodeSeed))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range requests {
		data, _ := hex.DecodeString(v.Hex)
		request, err := DecodeAs[EnrollRequest](data)
		if err != nil {
			t.Fatal(err)
		}
		sig, err := SignEnrollProof(node, request.Tok, request.Xk)
		if err != nil || sig != request.Sig {
			t.Fatalf("%s: signature %s, vector has %s (%v)", v.Name, sig, request.Sig, err)
		}
	}

	// The sealed reply opens with the curve seed (sealed by the JS nkeys the gateway uses).
	var replies []vector
	readVectors(t, "enrollReply.json", &replies)
	curve, err := nkeys.FromCurveSeed([]byte(keys.CurveSeed))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := hex.DecodeString(replies[0].Hex)
	reply, err := DecodeAs[EnrollReply](data)
	if err != nil {
		t.Fatal(err)
	}
	body, err := OpenEnrollReply(reply, curve)
	if err != nil {
		t.Fatalf("open sealed vector: %v", err)
	}
	if body.St != "approved" || body.Wid == "" || body.JWT == "" {
		t.Fatalf("unexpected body %+v", body)
	}

	// And a reply sealed here opens there (and here): the round trip the gateway does.
	public, _ := curve.PublicKey()
	sealed, err := SealEnrollReply(EnrollReplyBody{St: "pending", Retry: ptr(int64(5))}, public)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := OpenEnrollReply(sealed, curve)
	if err != nil || opened.St != "pending" || *opened.Retry != 5 {
		t.Fatalf("round trip: %+v %v", opened, err)
	}
	// A bystander's key does not open it.
	other, _ := nkeys.CreateCurveKeys()
	if _, err := OpenEnrollReply(sealed, other); !isReason(err, ReasonInvalid) {
		t.Fatalf("opened with another key: %v", err)
	}
	if _, err := base64.RawURLEncoding.DecodeString(sealed.Box); err != nil {
		t.Fatalf("box is not base64url: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, seed := range []string{"82a17601a17301", "84a17601a268621ea26d783ca164c0", "c1", "920101"} {
		data, _ := hex.DecodeString(seed)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, messageType := range MessageTypes {
			msg, err := Decode(messageType, data)
			if err != nil {
				continue
			}
			// Whatever decodes re-encodes, and to bytes that decode to the same message.
			encoded, err := Encode(msg)
			if err != nil {
				t.Fatalf("%s decoded but does not encode: %v", messageType, err)
			}
			again, err := Decode(messageType, encoded)
			if err != nil || fmt.Sprint(again.toMap()) != fmt.Sprint(msg.toMap()) {
				t.Fatalf("%s: round trip changed the message: %v", messageType, err)
			}
		}
	})
}

func isReason(err error, reason Reason) bool {
	var refused *DecodeError
	return errors.As(err, &refused) && refused.Reason == reason
}

func ptr[T any](v T) *T { return &v }

// jsonTree turns a vector's JSON object into the tree the encoder takes, keeping key order;
// `{"$bin": "<hex>"}` is a binary field (JSON has no bytes).
func jsonTree(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return jsonValue(dec)
}

func jsonValue(dec *json.Decoder) (any, error) {
	token, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := token.(type) {
	case json.Delim:
		if t == '[' {
			items := []any{}
			for dec.More() {
				item, err := jsonValue(dec)
				if err != nil {
					return nil, err
				}
				items = append(items, item)
			}
			_, err := dec.Token()
			return items, err
		}
		m := NewMap()
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			value, err := jsonValue(dec)
			if err != nil {
				return nil, err
			}
			m.Put(key.(string), value)
		}
		if _, err := dec.Token(); err != nil {
			return nil, err
		}
		if bin, ok := m.Get("$bin"); ok && m.Len() == 1 {
			return hex.DecodeString(bin.(string))
		}
		return m, nil
	case json.Number:
		return t.Int64()
	default:
		return t, nil // string, bool, nil
	}
}
