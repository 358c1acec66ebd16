package demo

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/catraca/catraca/tools/fan"
)

// Sell has buyers demo fans each buy two seats of the event as a browser
// would (the waiting room if it has one, best seats, checkout, the PSP's
// page), so the
// organizer's console opens on a sale in progress. It returns how many
// orders were paid.
func Sell(ctx context.Context, base string, event int64, buyers int) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		paid int
		errs []error
	)
	for i := range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := buy(ctx, fan.New(base, nil), event, fmt.Sprintf("buyer-%d@catraca.dev", i+1))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				paid++
			}
		}()
	}
	wg.Wait()
	return paid, errors.Join(errs...)
}

// buy takes one fan from sign-up to a paid order.
func buy(ctx context.Context, f *fan.Fan, event int64, email string) error {
	if err := f.SignUp(ctx, email, Password, "Demo Buyer"); err != nil {
		return fmt.Errorf("%s: sign up: %w", email, err)
	}
	_, err := fan.Retry(ctx, func() (fan.QueueStatus, error) { return f.Join(ctx, event) })
	var ferr *fan.Error
	switch {
	case errors.As(err, &ferr) && ferr.Code == "no-waiting-room": // buy directly
	case err != nil:
		return fmt.Errorf("%s: join: %w", email, err)
	default:
		if err := until(ctx, func() (bool, error) {
			s, err := fan.Retry(ctx, func() (fan.QueueStatus, error) { return f.Status(ctx, event) })
			return s.State == "admitted", err
		}); err != nil {
			return fmt.Errorf("%s: admission: %w", email, err)
		}
	}
	h, err := fan.Retry(ctx, func() (fan.Hold, error) { return f.HoldBest(ctx, event, 2, "") })
	if err != nil {
		return fmt.Errorf("%s: hold: %w", email, err)
	}
	url, _, err := f.Checkout(ctx, h.OrderID)
	if err != nil {
		return fmt.Errorf("%s: checkout: %w", email, err)
	}
	if err := until(ctx, func() (bool, error) { // a queued PSP call brings its page later
		if url != "" {
			return true, nil
		}
		o, err := f.Order(ctx, h.OrderID)
		if o.Payment != nil {
			url = o.Payment.URL
		}
		return url != "", err
	}); err != nil {
		return fmt.Errorf("%s: payment page: %w", email, err)
	}
	if err := f.PayOnPage(ctx, url, "4242 4242 4242 4242"); err != nil {
		return fmt.Errorf("%s: pay: %w", email, err)
	}
	return until(ctx, func() (bool, error) {
		o, err := f.Order(ctx, h.OrderID)
		return o.Status == "paid", err
	})
}

// until polls done every 200 ms until it is true, fails or ctx ends.
func until(ctx context.Context, done func() (bool, error)) error {
	for {
		ok, err := done()
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
