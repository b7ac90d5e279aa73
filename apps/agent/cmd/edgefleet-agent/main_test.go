package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefleet/edgefleet/apps/agent/config"
	"github.com/edgefleet/edgefleet/apps/agent/enroll"
	"github.com/edgefleet/edgefleet/apps/agent/internal/testnats"
	"github.com/edgefleet/edgefleet/apps/agent/protocol"
)

func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	valid := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(valid, []byte("stateDir: ./state\nservers: [\"nats://127.0.0.1:1\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	invalid := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(invalid, []byte("stateDir: ./state\nservers: [\"http://x\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var usage *usageError
	var configErr *config.Error
	cases := []struct {
		name string
		args []string
		want any
		text string
	}{
		{"no command", nil, &usage, "no command"},
		{"unknown command", []string{"fly"}, &usage, "unknown command fly"},
		{"no config", []string{"run"}, &usage, "--config"},
		{"unknown flag", []string{"run", "--nope"}, &usage, "nope"},
		{"invalid config names the field", []string{"run", "--config", invalid}, &configErr, "servers.0"},
		{"missing config file", []string{"enroll", "--config", filepath.Join(dir, "none.yaml")}, &configErr, "cannot read config"},
		{"not enrolled and no token", []string{"run", "--config", valid}, &configErr, "no enroll.token"},
		{"hollow without a count", []string{"hollow", "--token", "t", "--url", "nats://h:1"}, &usage, "--count"},
		{"hollow without a url", []string{"hollow", "--count", "2", "--token", "t"}, &usage, "--url"},
		{"hollow with a bad label", []string{"hollow", "--count", "2", "--token", "t", "--url", "nats://h:1", "--label", "x"}, &usage, "key=value"},
		{"hollow on an unknown control channel", []string{"hollow", "--control", "tcp"}, &usage, "the only control channel is stdio"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := run(c.args, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !errors.As(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("got %v, want a %T containing %q", err, c.want, c.text)
			}
		})
	}
	var out bytes.Buffer
	if err := run([]string{"version"}, &out, &out); err != nil || strings.TrimSpace(out.String()) != version {
		t.Fatalf("version: %q %v", out.String(), err)
	}
}

func buildAgent(t *testing.T) string {
	t.Helper()
	binary := filepath.Join(t.TempDir(), "edgefleet-agent")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return binary
}

// A node enrolled before subject layout 2 runs the new binary: its first Hello gets new
// credentials, which replace node.creds (same key) before the agent connects with them.
func TestRunMigratesLayout1CredentialsOnDisk(t *testing.T) {
	binary := buildAgent(t)
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, "k1")
	layout2 := testnats.NodeJWT("k1", testnats.Site)
	platform.ReissueAtHello(layout2)
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	if err := enroll.Save(stateDir, enroll.Identity{Nid: "node-k1", Wid: "k1", Org: "o1", JWT: testnats.NodeJWT("k1", ""), Seed: testnats.Seed}); err != nil {
		t.Fatal(err)
	}
	configPath := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(configPath, []byte(fmt.Sprintf("stateDir: ./state\nservers: [%q]\n", server.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	agent := exec.Command(binary, "run", "--config", configPath)
	agent.Stderr = &logs
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = agent.Process.Signal(syscall.SIGTERM)
		_ = agent.Wait()
	}()
	for deadline := time.Now().Add(15 * time.Second); ; {
		sites := platform.HelloSites()
		if len(sites) >= 2 && sites[len(sites)-1] == testnats.Site {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Hello on the new subjects (sites %q); agent log:\n%s", sites, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	identity, ok, err := enroll.Load(stateDir)
	if !ok || err != nil || identity.JWT != layout2 || identity.Seed != testnats.Seed || identity.Nid != "node-k1" {
		t.Fatalf("stored identity %+v %v %v", identity, ok, err)
	}
}

// The binary as a node runs it: SIGTERM stops the apps (no orphans), delivers, and exits 0.
func TestRunStopsCleanlyOnSIGTERM(t *testing.T) {
	binary := buildAgent(t)
	server := testnats.Start(t)
	platform := testnats.NewPlatform(t, server, "k1")
	marker := filepath.Join(t.TempDir(), "app.pid")
	platform.Prepare(protocol.DesiredPut{App: "app", Ver: "1", Spec: protocol.RunSpec{
		Command: []string{"sh", "-c", fmt.Sprintf("echo $$ > %s; exec sleep 1000", marker)},
	}})
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	// Already enrolled (the test server has no auth: any JWT does).
	if err := enroll.Save(stateDir, enroll.Identity{Nid: "node-k1", Wid: "k1", Org: "o1", JWT: testnats.NodeJWT("k1", testnats.Site), Seed: testnats.Seed}); err != nil {
		t.Fatal(err)
	}
	configPath := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(configPath, []byte(fmt.Sprintf("stateDir: ./state\nservers: [%q]\nreconnect: { baseMs: 100, maxMs: 1000 }\n", server.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	agent := exec.Command(binary, "run", "--config", configPath)
	agent.Stderr = &logs
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	deadline := time.Now().Add(15 * time.Second)
	for pid == 0 {
		if time.Now().After(deadline) {
			agent.Process.Kill()
			t.Fatalf("app never started; agent log:\n%s", logs.String())
		}
		text, _ := os.ReadFile(marker)
		fmt.Sscan(string(text), &pid)
		time.Sleep(50 * time.Millisecond)
	}
	if err := agent.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- agent.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, logs.String())
		}
	case <-time.After(15 * time.Second):
		agent.Process.Kill()
		t.Fatal("agent did not stop")
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatal("the app outlived the agent")
	}
	if !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Fatalf("log: %s", logs.String())
	}
}
