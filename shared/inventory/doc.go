// Package inventory holds the rules for selling seats and general-admission
// places on an event's shard. A hold is data, not a lock: one short READ
// COMMITTED transaction compares-and-sets the seat rows (or takes quantity
// from slotted counters), and writes the hold and its pending order
// together, so a seat is never held or sold by two orders and a failed
// request leaves nothing behind. The statements are shardstore's; this
// package decides which take a request needs, retries, and explains
// refusals. hold.go follows one hold request from its shape to its answer.
package inventory
