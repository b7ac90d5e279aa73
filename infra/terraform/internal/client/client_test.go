package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a test server answering from a script of (status, headers, body), one per request.
type answer struct {
	status int
	header map[string]string
	body   string
}

func scripted(t *testing.T, answers ...answer) (*Client, *atomic.Int32, *[]time.Duration) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(calls.Add(1)) - 1
		if got := r.Header.Get("Authorization"); got != "Bearer efk_test" {
			t.Errorf("Authorization = %q", got)
		}
		a := answers[min(n, len(answers)-1)]
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	c := New(srv.URL, "efk_test", "test")
	waits := &[]time.Duration{}
	c.sleep = func(_ context.Context, d time.Duration) error { *waits = append(*waits, d); return nil }
	return c, &calls, waits
}

func TestRetriesA429HonouringRetryAfterSeconds(t *testing.T) {
	c, calls, waits := scripted(t,
		answer{429, map[string]string{"Retry-After": "7"}, `{"code":"TOO_MANY_REQUESTS","message":"slow down"}`},
		answer{200, nil, `{"id":"s1","name":"plant-7","description":null,"timeZone":null,"total":0}`},
	)
	site, err := c.GetSite(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if site.Name != "plant-7" || calls.Load() != 2 {
		t.Fatalf("site %+v after %d calls", site, calls.Load())
	}
	if len(*waits) != 1 || (*waits)[0] != 7*time.Second {
		t.Fatalf("waits %v, want [7s]", *waits)
	}
}

func TestRetryAfterAsAnHTTPDate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d, ok := retryAfter(now.Add(12*time.Second).Format(http.TimeFormat), now)
	if !ok || d != 12*time.Second {
		t.Fatalf("got %v %v", d, ok)
	}
	if _, ok := retryAfter("soon", now); ok {
		t.Fatal("an unreadable Retry-After must be ignored")
	}
}

func TestBacksOffExponentiallyOn5xxWithoutRetryAfterAndCapsTheWait(t *testing.T) {
	c, calls, waits := scripted(t,
		answer{502, nil, "bad gateway"},
		answer{500, nil, `{"code":"INTERNAL_SERVER_ERROR","message":"ref 1"}`},
		answer{503, map[string]string{"Retry-After": "3600"}, ""},
		answer{200, nil, `{"id":"a","name":"x","description":null,"versions":0}`},
	)
	c.MaxBackoff = 10 * time.Second
	if _, err := c.GetApp(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 10 * time.Second}
	if calls.Load() != 4 || len(*waits) != 3 || (*waits)[0] != want[0] || (*waits)[1] != want[1] || (*waits)[2] != want[2] {
		t.Fatalf("calls %d waits %v, want %v", calls.Load(), *waits, want)
	}
}

func TestGivesUpAfterMaxRetriesWithTheLastError(t *testing.T) {
	c, calls, _ := scripted(t, answer{503, nil, `{"code":"SERVICE_UNAVAILABLE","message":"down"}`})
	c.MaxRetries = 2
	_, err := c.GetApp(context.Background(), "a")
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 503 || apiErr.Message != "down" || calls.Load() != 3 {
		t.Fatalf("err %v after %d calls", err, calls.Load())
	}
}

func TestAPOSTThatFailedWith500IsNotRepeated(t *testing.T) {
	c, calls, _ := scripted(t, answer{500, nil, `{"code":"INTERNAL_SERVER_ERROR","message":"ref 2"}`})
	if _, err := c.CreateApp(context.Background(), AppCreate{Name: "x"}); err == nil || calls.Load() != 1 {
		t.Fatalf("err %v after %d calls: a create may have happened, it must not be sent twice", err, calls.Load())
	}
}

func TestA404IsNotFoundAndNotRetried(t *testing.T) {
	c, calls, _ := scripted(t, answer{404, nil, `{"code":"NOT_FOUND","message":"site x not found"}`})
	_, err := c.GetSite(context.Background(), "x")
	if !IsNotFound(err) || calls.Load() != 1 {
		t.Fatalf("err %v after %d calls", err, calls.Load())
	}
	if IsNotFound(errors.New("other")) {
		t.Fatal("a plain error is not a 404")
	}
}

func TestInvalidInputCarriesTheIssuePaths(t *testing.T) {
	c, _, _ := scripted(t, answer{400, nil,
		`{"code":"BAD_REQUEST","message":"invalid input","issues":[{"message":"too small","path":["runSpec","command",0]}]}`})
	_, err := c.CreateAppVersion(context.Background(), "a", AppVersionCreate{})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || len(apiErr.Issues) != 1 || apiErr.IssuePath(apiErr.Issues[0]) != "runSpec.command.0" {
		t.Fatalf("err %#v", err)
	}
}

func TestANonJSONErrorBodyBecomesTheMessage(t *testing.T) {
	c, _, _ := scripted(t, answer{401, nil, "no key"})
	_, err := c.Organization(context.Background())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Message != "no key" {
		t.Fatalf("err %#v", err)
	}
}
