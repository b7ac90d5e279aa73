// Package client is a small typed client of Edgefleet's REST API (/api/v1, OpenAPI at
// /api/openapi.json). It authenticates with an API key, retries refused and failed requests
// (429 and 5xx, honouring Retry-After) and turns error bodies ({code, message, issues}) into
// *APIError, so callers can tell "not found" from everything else.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one Edgefleet deployment as one API key.
type Client struct {
	// BaseURL is the deployment's origin, e.g. http://127.0.0.1:3000 (the API is under /api/v1).
	BaseURL string
	APIKey  string
	HTTP    *http.Client
	// MaxRetries is how many times a request is retried after a 429 or 5xx (0: never).
	MaxRetries int
	// MinBackoff is the first wait between retries when the server gives no Retry-After; it doubles.
	MinBackoff time.Duration
	// MaxBackoff caps every wait, Retry-After included.
	MaxBackoff time.Duration
	UserAgent  string
	// sleep waits between retries; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// New returns a client with sensible retry defaults.
func New(baseURL, apiKey, userAgent string) *Client {
	return &Client{
		BaseURL:    strings.TrimRight(baseURL, "/"),
		APIKey:     apiKey,
		HTTP:       &http.Client{Timeout: 5 * time.Minute},
		MaxRetries: 5,
		MinBackoff: 500 * time.Millisecond,
		MaxBackoff: 30 * time.Second,
		UserAgent:  userAgent,
		sleep:      sleepContext,
	}
}

const apiPrefix = "/api/v1"

// Issue is one invalid-input finding: the message and where in the input it points.
type Issue struct {
	Message string `json:"message"`
	Path    []any  `json:"path"`
}

// APIError is an answer of 4xx or 5xx, in the API's error shape.
type APIError struct {
	Status  int     `json:"-"`
	Method  string  `json:"-"`
	Path    string  `json:"-"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Issues  []Issue `json:"issues,omitempty"`
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
	for _, issue := range e.Issues {
		fmt.Fprintf(&b, "\n  - %s: %s", e.IssuePath(issue), issue.Message)
	}
	return b.String()
}

// IssuePath renders an issue's path as dotted text (runSpec.command.0).
func (e *APIError) IssuePath(issue Issue) string {
	parts := make([]string, 0, len(issue.Path))
	for _, p := range issue.Path {
		parts = append(parts, fmt.Sprint(p))
	}
	return strings.Join(parts, ".")
}

// IsNotFound is true for a 404: the object does not exist, or is another organization's.
func IsNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound
}

// IsConflict is true for a 409.
func IsConflict(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusConflict
}

// retryable says whether an answer may be tried again. A 429 was refused before any work; a
// POST that failed with another 5xx than 503 may have done its work, so it is not repeated.
func retryable(method string, status int) bool {
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		return true
	}
	return status >= 500 && method != http.MethodPost
}

// retryAfter reads Retry-After (seconds or an HTTP date); ok is false when absent or unreadable.
func retryAfter(header string, now time.Time) (time.Duration, bool) {
	header = strings.TrimSpace(header)
	if header == "" {
		return 0, false
	}
	if seconds, err := strconv.Atoi(header); err == nil && seconds >= 0 {
		return time.Duration(seconds) * time.Second, true
	}
	if at, err := http.ParseTime(header); err == nil {
		d := at.Sub(now)
		if d < 0 {
			d = 0
		}
		return d, true
	}
	return 0, false
}

func (c *Client) backoff(attempt int, header string) time.Duration {
	wait, ok := retryAfter(header, time.Now())
	if !ok {
		wait = time.Duration(float64(c.MinBackoff) * math.Pow(2, float64(attempt)))
	}
	if c.MaxBackoff > 0 && wait > c.MaxBackoff {
		wait = c.MaxBackoff
	}
	return wait
}

func sleepContext(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// Do sends one JSON request (in may be nil) and decodes a 2xx answer into out (may be nil).
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("encoding %s %s: %w", method, path, err)
		}
	}
	return c.send(ctx, method, path, query, "application/json", body, out)
}

// Upload sends raw bytes (PUT, application/octet-stream) and decodes the answer into out.
func (c *Client) Upload(ctx context.Context, path string, content []byte, out any) error {
	return c.send(ctx, http.MethodPut, path, nil, "application/octet-stream", content, out)
}

func (c *Client) send(ctx context.Context, method, path string, query url.Values, contentType string, body []byte, out any) error {
	target := c.BaseURL + apiPrefix + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	sleep := c.sleep
	if sleep == nil {
		sleep = sleepContext
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
		req.Header.Set("Accept", "application/json")
		if c.UserAgent != "" {
			req.Header.Set("User-Agent", c.UserAgent)
		}
		if body != nil {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			if ctx.Err() == nil && attempt < c.MaxRetries {
				if sleepErr := sleep(ctx, c.backoff(attempt, "")); sleepErr != nil {
					return sleepErr
				}
				continue
			}
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		data, readErr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if readErr != nil {
			return fmt.Errorf("%s %s: reading the answer: %w", method, path, readErr)
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			if out == nil || len(data) == 0 {
				return nil
			}
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
			}
			return nil
		}
		if retryable(method, resp.StatusCode) && attempt < c.MaxRetries {
			if err := sleep(ctx, c.backoff(attempt, resp.Header.Get("Retry-After"))); err != nil {
				return err
			}
			continue
		}
		apiErr := &APIError{Status: resp.StatusCode, Method: method, Path: path}
		if json.Unmarshal(data, apiErr) != nil || apiErr.Message == "" {
			apiErr.Code = http.StatusText(resp.StatusCode)
			apiErr.Message = strings.TrimSpace(string(data))
		}
		return apiErr
	}
}

func get[T any](ctx context.Context, c *Client, path string, query url.Values) (*T, error) {
	var out T
	if err := c.Do(ctx, http.MethodGet, path, query, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func call[T any](ctx context.Context, c *Client, method, path string, in any) (*T, error) {
	var out T
	if err := c.Do(ctx, method, path, nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func esc(id string) string { return url.PathEscape(id) }
