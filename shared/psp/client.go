package psp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Client calls a Stripe-style PSP HTTP API (the simulator, or a real
// provider behind the same shape).
type Client struct {
	BaseURL string
	APIKey  string
	HTTP    *http.Client
}

// NewClient returns a client with sane timeouts.
func NewClient(baseURL, apiKey string) *Client {
	return &Client{BaseURL: baseURL, APIKey: apiKey, HTTP: &http.Client{Timeout: 10 * time.Second}}
}

func (c *Client) do(ctx context.Context, method, path, key string, body, out any) error {
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, &buf)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.APIKey)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusTooManyRequests:
		return ErrRateLimited
	case res.StatusCode >= 500:
		return fmt.Errorf("%w: status %d", ErrUnavailable, res.StatusCode)
	case res.StatusCode >= 400:
		var e struct {
			Error string `json:"error"`
		}
		json.NewDecoder(res.Body).Decode(&e)
		return fmt.Errorf("%w: %d %s", ErrRejected, res.StatusCode, e.Error)
	}
	return json.NewDecoder(res.Body).Decode(out)
}

// CreatePayment implements PSP.
func (c *Client) CreatePayment(ctx context.Context, p CreatePayment, key string) (Payment, error) {
	var out Payment
	return out, c.do(ctx, http.MethodPost, "/v1/payments", key, p, &out)
}

// GetPayment implements PSP.
func (c *Client) GetPayment(ctx context.Context, id string) (Payment, error) {
	var out Payment
	return out, c.do(ctx, http.MethodGet, "/v1/payments/"+id, "", nil, &out)
}

// CancelPayment implements PSP.
func (c *Client) CancelPayment(ctx context.Context, id, key string) (Payment, error) {
	var out Payment
	return out, c.do(ctx, http.MethodPost, "/v1/payments/"+id+"/cancel", key, nil, &out)
}

// Refund implements PSP.
func (c *Client) Refund(ctx context.Context, paymentID string, amount int64, key string) (Refund, error) {
	var out Refund
	return out, c.do(ctx, http.MethodPost, "/v1/refunds", key, map[string]any{"payment": paymentID, "amount": amount}, &out)
}

// Events implements PSP.
func (c *Client) Events(ctx context.Context, since time.Time) ([]Event, error) {
	var out struct {
		Data []Event `json:"data"`
	}
	err := c.do(ctx, http.MethodGet, "/v1/events?since="+strconv.FormatInt(since.UnixMilli(), 10), "", nil, &out)
	return out.Data, err
}
