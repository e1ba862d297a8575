package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/invoicing/invoicing/webhook"
)

// deliveryConfig tunes webhook delivery (docs/configuration.md).
type deliveryConfig struct {
	RetryFor     time.Duration // WEBHOOK_RETRY_FOR: retries after the first attempt
	DisableAfter time.Duration // WEBHOOK_DISABLE_AFTER: a dead endpoint is disabled
	Timeout      time.Duration // WEBHOOK_TIMEOUT: an attempt's bound
	// BackoffMin and BackoffMax (WEBHOOK_BACKOFF_MIN, _MAX) shape the retry
	// delays; tests shorten them to see many retries in seconds.
	BackoffMin, BackoffMax time.Duration
	Workers                int // WEBHOOK_WORKERS: attempts in flight per instance
}

// loadDeliveryConfig reads the WEBHOOK_* delivery settings.
func loadDeliveryConfig(getenv func(string) string, cfg *config, problems *[]error) {
	d := deliveryConfig{Workers: 16}
	d.RetryFor = duration(getenv, "WEBHOOK_RETRY_FOR", webhook.DefaultRetryFor, problems)
	d.DisableAfter = duration(getenv, "WEBHOOK_DISABLE_AFTER", webhook.DefaultDisableAfter, problems)
	d.Timeout = duration(getenv, "WEBHOOK_TIMEOUT", webhook.DefaultTimeout, problems)
	d.BackoffMin = duration(getenv, "WEBHOOK_BACKOFF_MIN", webhook.DefaultBackoffMin, problems)
	d.BackoffMax = duration(getenv, "WEBHOOK_BACKOFF_MAX", webhook.DefaultBackoffMax, problems)
	if d.BackoffMax < d.BackoffMin {
		*problems = append(*problems, fmt.Errorf("WEBHOOK_BACKOFF_MAX=%s: want at least WEBHOOK_BACKOFF_MIN (%s)", d.BackoffMax, d.BackoffMin))
	}
	if v := getenv("WEBHOOK_WORKERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 1000 {
			*problems = append(*problems, fmt.Errorf("WEBHOOK_WORKERS=%q: want a number from 1 to 1000", v))
		}
		d.Workers = n
	}
	cfg.Delivery = d
}
