// Package rediskey builds the one part every Redis key of an event shares:
// the hash tag {evt:ID}. Keys with the same tag live in one Redis Cluster
// slot, so one script may touch all of an event's keys; building the tag
// here and nowhere else keeps the waiting room and the live feed agreeing.
package rediskey

import "strconv"

// Event is the prefix of event's keys: prefix, the hash tag, a colon.
func Event(prefix string, eventID int64) string {
	return prefix + "{evt:" + strconv.FormatInt(eventID, 10) + "}:"
}

// Account is the prefix of an account's keys (session revocations, its
// block and velocity flag): one slot, so one MGET reads them all.
func Account(prefix string, accountID int64) string {
	return prefix + "{acct:" + strconv.FormatInt(accountID, 10) + "}:"
}
