module github.com/edgefleet/edgefleet/apps/agent

go 1.26.8

require (
	github.com/nats-io/nkeys v0.4.16
	github.com/vmihailenco/msgpack/v5 v5.4.1
)

require (
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	golang.org/x/crypto v0.57.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
