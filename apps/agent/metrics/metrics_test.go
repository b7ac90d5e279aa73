package metrics

import (
	"os"
	"testing"
	"time"
)

func TestParseCPU(t *testing.T) {
	got, err := parseCPU("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n")
	if err != nil || got.busy != 150 || got.total != 1000 {
		t.Fatalf("got %+v %v", got, err)
	}
	if _, err := parseCPU("intr 1 2 3\n"); err == nil {
		t.Fatal("no cpu line accepted")
	}
}

func TestParseMemory(t *testing.T) {
	used, total := parseMemory("MemTotal:       4000 kB\nMemFree:  100 kB\nMemAvailable:   1000 kB\n")
	if used != 3000*1024 || total != 4000*1024 {
		t.Fatalf("used %d total %d", used, total)
	}
}

func TestParseNetDevSkipsLoAndKeepsTheFirstFourByName(t *testing.T) {
	text := `Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo: 999 1 0 0 0 0 0 0 999 1 0 0 0 0 0 0
  wlan0: 5 0 0 0 0 0 0 0 6 0 0 0 0 0 0 0
  eth1: 3 0 0 0 0 0 0 0 4 0 0 0 0 0 0 0
  eth0: 1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0
  eth2: 1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0
  eth3: 1 0 0 0 0 0 0 0 2 0 0 0 0 0 0 0
`
	got := parseNetDev(text)
	if len(got) != 4 || got[0].If != "eth0" || got[0].Rx != 1 || got[0].Tx != 2 || got[3].If != "eth3" {
		t.Fatalf("got %+v", got)
	}
}

func TestHostSamplerReadsThisHost(t *testing.T) {
	sampler := NewHostSampler(t.TempDir())
	sampler.Sample()
	time.Sleep(20 * time.Millisecond)
	sample, err := sampler.Sample()
	if err != nil {
		t.Fatal(err)
	}
	if sample.Mt <= 0 || sample.Mu <= 0 || sample.Dt <= 0 || sample.CPU < 0 || sample.CPU > 1000 {
		t.Fatalf("implausible sample %+v", sample)
	}
}

func TestSampleProcessReadsItself(t *testing.T) {
	sample, err := SampleProcess(os.Getpid())
	if err != nil || sample.RSS <= 0 || sample.StartTicks <= 0 {
		t.Fatalf("got %+v %v", sample, err)
	}
	if _, err := SampleProcess(1 << 30); err == nil {
		t.Fatal("a missing process was sampled")
	}
	named, err := parseStat("42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 1 0 777 0 0")
	if err != nil || named.CPU != 4*time.Second || named.StartTicks != 777 {
		t.Fatalf("name with parentheses: %+v %v", named, err)
	}
}

func TestCPUPerMille(t *testing.T) {
	if got := CPUPerMille(time.Second, 2*time.Second, 4*time.Second); got != 250 {
		t.Fatalf("got %d", got)
	}
	if got := CPUPerMille(2*time.Second, time.Second, time.Second); got != 0 {
		t.Fatalf("a pid reused (less CPU than before) must read 0, got %d", got)
	}
}
