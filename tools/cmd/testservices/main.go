// Command testservices starts or stops the PostgreSQL, Redis and Redis
// Cluster servers the tests use, and PgBouncer in transaction pooling mode in
// front of PostgreSQL (the tests start them on demand; CI stops them at the
// end).
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"time"

	"github.com/catraca/catraca/tools/testenv"
)

func main() {
	down := flag.Bool("down", false, "stop the test servers")
	flag.Parse()
	env, cluster := testenv.Servers(), testenv.ClusterServers()
	if *down {
		if err := errors.Join(env.Down(), cluster.Down()); err != nil {
			log.Fatal(err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := env.Up(ctx); err != nil {
		log.Fatal(err)
	}
	if err := cluster.Up(ctx); err != nil {
		log.Fatal(err)
	}
}
