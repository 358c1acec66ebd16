# catraca — make dev runs the whole local stack, make test runs every test.
SHELL := /bin/bash
GO ?= go
FUNCTIONS := $(notdir $(wildcard functions/*))
GOTEST_FLAGS ?= -timeout 20m -count=1

.PHONY: fuzz onsale onsale-farm dev dev-reset test test-go test-cluster test-browser test-edge browser screenshots synth deploy localstack-deploy build tools vet fmt clean services services-down bench model infra-tools bootstrap preflight

dev: ## run the whole local stack with the demo on-sale
	$(GO) run ./tools/cmd/devstack

dev-reset: ## stop the local servers and wipe local data
	$(GO) run ./tools/cmd/devstack -reset

services: ## start only PostgreSQL and Redis of the local stack and print its environment
	$(GO) run ./tools/cmd/devstack -services

test: vet test-edge test-go test-cluster test-browser ## every test (starts its own PostgreSQL, Redis, Redis Cluster and headless Chromium)

# infra-tools: the stack tests run cfn-guard from infra/_cdkcli.
test-go: infra-tools
	$(GO) test $(GOTEST_FLAGS) $$($(GO) list ./... | grep -v /edge/e2e)

# ElastiCache Serverless is a Redis Cluster: the waiting room, admission,
# limits, live pushes and a whole on-sale again on the test cluster
# (CROSSSLOT or an unfollowed MOVED fails them), and the failover tests.
test-cluster:
	CATRACA_TEST_REDIS=cluster $(GO) test $(GOTEST_FLAGS) ./shared/queue ./shared/admission ./shared/ratelimit ./shared/live ./tools/onsale

# The browser tests run alone: sharing 2 cores with every other package
# made Chromium miss its waits.
test-browser: browser edge/node_modules/axe-core/axe.min.js
	$(GO) test $(GOTEST_FLAGS) ./edge/e2e

FUZZTIME ?= 60s
fuzz: ## fuzz the HTTP API from its seed corpus for FUZZTIME (default 60s); make test runs the corpus only
	$(GO) test -run '^$$' -fuzz '^FuzzAPI$$' -fuzztime $(FUZZTIME) ./shared/api

# axe-core, which the browser tests run on every page (edge/package.json).
edge/node_modules/axe-core/axe.min.js: edge/package.json edge/package-lock.json
	cd edge && npm ci --no-audit --no-fund --loglevel=error
	touch $@

test-edge: ## the CloudFront Function's unit tests and the web app's import-circle check (Node's test runner)
	cd edge && node --test test/

browser: ## install Debian's Chromium for the browser tests when missing
	@command -v chromium >/dev/null || { \
	  echo "installing chromium (apt)"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

screenshots: browser edge/node_modules/axe-core/axe.min.js ## refresh the screenshots in docs/screenshots from the browser tests
	$(GO) test -count=1 -run 'TestBuyReservedSeatsFromTheMap|TestWaitingRoomAdmitsThenSells|TestSoldOutEvent|TestPhoneOnSale|TestImportVenueFromCSV|TestCreateEventAndOpenItsSale|TestControlRoomFollowsASaleAndPausesTheLine|TestOrganizerFindsAndRefundsAnOrder|TestPhoneSectionShowsRowsAndSeats|TestReleaseKeepsTheTurn|TestPausedLineSaysSo|TestCeilingChangeShowsOldAndNew' ./edge/e2e -update-docs

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...

build: ## dist/<function>/bootstrap for every Lambda (linux/arm64)
	@for fn in $(FUNCTIONS); do \
	  echo "build $$fn"; \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' \
	    -o dist/$$fn/bootstrap ./functions/$$fn || exit 1; \
	done

tools: ## install the Lambda Runtime Interface Emulator into .local/bin
	cd /tmp && GOBIN=$(CURDIR)/.local/bin GOFLAGS=-mod=mod $(GO) install \
	  github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d

CDK := infra/_cdkcli/node_modules/.bin/cdk
CDKLOCAL := infra/_cdkcli/node_modules/.bin/cdklocal

$(CDK): infra/_cdkcli/package.json infra/_cdkcli/package-lock.json
	cd infra/_cdkcli && npm ci --no-audit --no-fund --loglevel=error
	touch $@

infra-tools: $(CDK) ## install the CDK CLI and cfn-guard with the Control Tower rules (npm, infra/_cdkcli)

# An example environment outside us-east-1, so make synth works offline and
# shows the cross-region shape a real deployment has.
SYNTH_CONTEXT ?= -c account=123456789012 -c region=eu-west-1 -c azs=eu-west-1a,eu-west-1b,eu-west-1c

synth: build $(CDK) ## synthesize the CloudFormation templates into cdk.out (offline; cdk-nag runs on them)
	$(CDK) synth --quiet $(SYNTH_CONTEXT)
	@echo "templates in cdk.out/"

bootstrap: build $(CDK) ## prepare your account for CDK in your region and in us-east-1 (once; see docs/deploy.md)
	$(CDK) bootstrap

# Read-only AWS calls; settings as for cdk (cdk.json, ARGS="-c apiConcurrency=900").
preflight: ## say what in your AWS account would make a deployment fail (concurrency quota, SES sandbox, Aurora version, Origin Shield)
	$(GO) run ./infra/preflight $(ARGS)

deploy: build $(CDK) ## deploy every stack to the AWS account of your credentials (see docs/deploy.md)
	$(CDK) deploy --all --require-approval broadening --outputs-file cdk.out/outputs.json

# LocalStack community runs the VPC and the queues, not Aurora, ElastiCache,
# CloudFront Functions or a CLOUDFRONT-scope WAF: only those two stacks.
localstack-deploy: build $(CDK) ## deploy the network and async stacks to LocalStack (needs Docker and a running LocalStack)
	$(CDKLOCAL) bootstrap && $(CDKLOCAL) deploy catraca-network catraca-async --exclusively --require-approval never

services-down: ## stop the test servers
	$(GO) run ./tools/cmd/testservices -down

clean:
	rm -rf dist

onsale: ## a 5,000-fan on-sale on a private stack → docs/onsale/ (ARGS="-fans 100000 -chaos redis-kill")
	$(GO) run ./tools/cmd/onsale -fans 5000 $(ARGS)

onsale-farm: ## a scalper farm (300 bots, 5 cards, 3 devices) among 5,000 fans at a 2,400-ticket venue, defenses off then on → docs/onsale-farm/ (make onsale ARGS="-farm 300" for the full venue)
	$(GO) run ./tools/cmd/onsale -fans 5000 -seats 2000 -ga 400 -farm 300 $(ARGS)

bench: ## every Go benchmark (3 runs, medians) with local and Aurora-like commits, every target judged in both, and a 5,000-fan on-sale under the commit delay → docs/benchmarks.md
	$(GO) run ./tools/cmd/benchreport -count 3 -onsale-fans 5000 ./shared/...

MODEL_CHECKS ?= 200
model: ## the model-based test of the whole sale, long: MODEL_CHECKS sequences (a failure prints the -rapid.seed that replays it)
	$(GO) test -count=1 -timeout 90m -run '^TestSaleModel$$' ./tools/stack -v -rapid.checks=$(MODEL_CHECKS) $(ARGS)
