// Package lambdatest runs a function's bootstrap binary under the AWS Lambda
// Runtime Interface Emulator (the program SAM runs inside its containers),
// so tests exercise the real Lambda packaging without Docker.
package lambdatest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/tools/syncbuf"
	"github.com/catraca/catraca/tools/testenv"
)

// RIEModule is the pinned emulator version, installed from the Go module proxy.
const RIEModule = "github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d"

// RIE returns the path of aws-lambda-rie, installing it into .local/bin.
func RIE(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	bin := filepath.Join(testenv.RepoRoot(), ".local", "bin")
	path := filepath.Join(bin, "aws-lambda-rie")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	cmd := exec.Command("go", "install", RIEModule)
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=-mod=mod")
	cmd.Dir = t.TempDir() // outside our module: install the tool on its own
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install aws-lambda-rie: %v\n%s", err, out)
	}
	return path
}

// Build compiles the function package pkg (e.g. "./functions/api") for this
// host with the flags the deployed binary uses, and returns its path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", out, pkg)
	cmd.Dir = testenv.RepoRoot()
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// Function is a bootstrap running under the emulator.
type Function struct {
	url string
}

// Start runs bootstrap under the emulator with env added to the environment.
func Start(t testing.TB, bootstrap string, env map[string]string) *Function {
	t.Helper()
	for attempt := 1; ; attempt++ {
		f, err := start(t, bootstrap, env)
		if err == nil {
			return f
		}
		if !errors.Is(err, errPortTaken) || attempt == 5 {
			t.Fatal(err)
		}
	}
}

// errPortTaken: a port chosen free was bound by someone else before the
// emulator could bind it; another pair of ports is tried.
var errPortTaken = errors.New("emulator port taken")

// start picks two free ports and runs the emulator on them. Packages test
// in parallel processes: the choice and the bind happen under a lock file
// shared by every test process, so two emulators never race for a port.
func start(t testing.TB, bootstrap string, env map[string]string) (*Function, error) {
	unlock, err := lockPorts()
	if err != nil {
		return nil, err
	}
	defer unlock()
	port, apiPort := pickPort(t), pickPort(t)
	cmd := exec.Command(RIE(t),
		"--runtime-interface-emulator-address", "127.0.0.1:"+strconv.Itoa(port),
		"--runtime-api-address", "127.0.0.1:"+strconv.Itoa(apiPort),
		bootstrap)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logs := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start emulator: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		cmd.Process.Kill()
		<-exited
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-exited:
			if strings.Contains(logs.String(), "address already in use") {
				return nil, fmt.Errorf("%w:\n%s", errPortTaken, logs)
			}
			return nil, fmt.Errorf("emulator exited:\n%s", logs)
		default:
		}
		// Both ports must be the emulator's own: it binds one and can
		// still fail on the other (TestStartRetriesWhenAPortIsTaken).
		if listens(cmd.Process.Pid, port) && listens(cmd.Process.Pid, apiPort) {
			break
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("emulator did not listen:\n%s", logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("emulator output:\n%s", logs)
		}
	})
	return &Function{url: fmt.Sprintf("http://127.0.0.1:%d/2015-03-31/functions/function/invocations", port)}, nil
}

// lockPorts takes the machine-wide lock of emulator start-ups.
func lockPorts() (func(), error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "catraca-lambdatest.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing releases the lock
}

// Invoke sends event and decodes the function's response into out.
func (f *Function) Invoke(t testing.TB, event, out any) {
	t.Helper()
	body := f.InvokeRaw(t, event)
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("invoke: decode %s: %v", body, err)
	}
}

// InvokeRaw sends event and returns the function's response as Lambda
// carries it (its size is what Lambda's payload limits count).
func (f *Function) InvokeRaw(t testing.TB, event any) []byte {
	t.Helper()
	b, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.Post(f.url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("invoke: emulator answered %d: %s", res.StatusCode, body)
	}
	return body
}

// pickPort chooses a port; tests replace it to take one away.
var pickPort = freePort

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Env renders cfg as the environment infra/stacks gives function fn: only
// the variables its configuration reads (config.Functions), so a test
// under the emulator fails if the function needs more than it is given.
func Env(fn string, cfg config.Config) map[string]string {
	var shards []string
	for _, id := range cfg.ShardIDs() {
		shards = append(shards, strconv.Itoa(id)+"="+cfg.Shards[id])
	}
	all := map[string]string{
		"CATRACA_PUBLIC_URL":          cfg.PublicURL,
		"CATRACA_CATALOG_DSN":         cfg.CatalogDSN,
		"CATRACA_SHARD_DSNS":          strings.Join(shards, ","),
		"CATRACA_REDIS_ADDR":          cfg.RedisAddr,
		"CATRACA_REDIS_PREFIX":        cfg.RedisPrefix,
		"CATRACA_SESSION_KEYS":        testenv.KeyString(cfg.SessionKeys[0]),
		"CATRACA_ADMISSION_KEYS":      testenv.KeyString(cfg.AdmissionKeys[0]),
		"CATRACA_PSP_WEBHOOK_SECRETS": cfg.PSPWebhookSecrets[0],
		"CATRACA_TICKET_KEY":          testenv.KeyString(cfg.TicketKey[0]),
		"CATRACA_PSP_URL":             cfg.PSPURL,
		"CATRACA_PSP_API_KEY":         cfg.PSPAPIKey,
		"CATRACA_ARGON2_MEMORY_KIB":   strconv.Itoa(int(cfg.Argon2MemoryKiB)),
		"CATRACA_ARGON2_TIME":         strconv.Itoa(int(cfg.Argon2Time)),
		"CATRACA_AUTH_PER_IP":         strconv.Itoa(cfg.AuthPerIP),
	}
	env := map[string]string{}
	for _, v := range config.Vars(config.Functions[fn]) {
		if value, ok := all[v.Name]; ok {
			env[v.Name] = value
		}
	}
	return env
}

// StartFunction builds functions/<name> and starts it with the environment
// infra/stacks gives it (Env), after adjust (nil: none) has changed that;
// it returns the environment too, for the test to check what is left out.
func StartFunction(t testing.TB, name string, cfg config.Config, adjust func(env map[string]string)) (*Function, map[string]string) {
	t.Helper()
	env := Env(name, cfg)
	if adjust != nil {
		adjust(env)
	}
	return Start(t, Build(t, "./functions/"+name), env), env
}

// URLRequest is the event a function URL sends for one HTTP request.
func URLRequest(method, path, body string, headers map[string]string) events.APIGatewayV2HTTPRequest {
	h := map[string]string{"content-type": "application/json", "host": "abc.lambda-url.eu-west-1.on.aws"}
	for k, v := range headers {
		h[k] = v
	}
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: "$default", RawPath: path, Headers: h, Body: body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: h["host"], RequestID: "req-1", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.9"},
		},
	}
}
