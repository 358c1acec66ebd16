package order

import (
	"context"
	"log/slog"
	"time"
)

// LocalQueue is the in-process stand-in for the SQS FIFO queue: jobs go to
// a few workers that run Service.Create (which waits for PSP quota) and
// retry failures with backoff.
type LocalQueue struct {
	jobs chan Job
}

// NewLocalQueue returns a queue with room for size waiting jobs.
func NewLocalQueue(size int) *LocalQueue { return &LocalQueue{jobs: make(chan Job, size)} }

// Send implements Queue.
func (q *LocalQueue) Send(ctx context.Context, j Job) error {
	select {
	case q.jobs <- j:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run consumes jobs with workers goroutines until ctx ends.
func (q *LocalQueue) Run(ctx context.Context, workers int, s *Service, log *slog.Logger) {
	for range workers {
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case j := <-q.jobs:
					if err := s.Create(ctx, j); err != nil {
						log.Warn("psp job failed, retrying", "order", j.OrderID, "err", err)
						go func() {
							select {
							case <-time.After(time.Second):
								q.Send(ctx, j)
							case <-ctx.Done():
							}
						}()
					}
				}
			}
		}()
	}
}
