// Command testservices starts or stops the PostgreSQL and Redis servers the
// tests use, and PgBouncer in transaction pooling mode in front of
// PostgreSQL (the tests start them on demand; CI stops them at the end).
package main

import (
	"context"
	"flag"
	"log"
	"time"

	"github.com/catraca/catraca/shared/dev/testenv"
)

func main() {
	down := flag.Bool("down", false, "stop the test servers")
	flag.Parse()
	env := testenv.Servers()
	if *down {
		if err := env.Down(); err != nil {
			log.Fatal(err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := env.Up(ctx); err != nil {
		log.Fatal(err)
	}
}
