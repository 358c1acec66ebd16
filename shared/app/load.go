package app

import (
	"context"
	"fmt"
	"log"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/catraca/catraca/shared/config"
	"github.com/catraca/catraca/shared/secret"
)

// Load reads configuration T (one function's, e.g. config.Sweep) for a
// Lambda: {{secret:…}} and {{ssm:…}} placeholders in the environment are
// filled from Secrets Manager and Parameter Store first, once per cold start
// (Secret keeps one that rotates current).
func Load[T any](ctx context.Context) (T, error) {
	if err := resolveSecrets(ctx); err != nil {
		var zero T
		return zero, err
	}
	return config.Load[T]()
}

// MustLoad is Load for a Lambda's main: it exits on error, before the
// runtime asks for an invocation.
func MustLoad[T any](ctx context.Context) T {
	return Must(Load[T](ctx))
}

// Must returns v, or exits a Lambda's main on a set-up error.
func Must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}

// resolveSecrets fills the placeholders; without any (the local stack) it
// does nothing and needs no AWS credentials.
func resolveSecrets(ctx context.Context) error {
	environ := os.Environ()
	if !config.HasSecretRefs(environ) {
		return nil
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("aws config: %w", err)
	}
	sm := secretsmanager.NewFromConfig(awsCfg)
	params := ssm.NewFromConfig(awsCfg)
	fetch := func(ctx context.Context, store, id string) (string, error) {
		if store == "ssm" {
			out, err := params.GetParameter(ctx, &ssm.GetParameterInput{Name: &id})
			if err != nil {
				return "", err
			}
			return aws.ToString(out.Parameter.Value), nil
		}
		out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &id})
		if err != nil {
			return "", err
		}
		if out.SecretString == nil {
			return "", fmt.Errorf("secret %s has no string value", id)
		}
		return *out.SecretString, nil
	}
	vars, err := config.ResolveSecrets(ctx, environ, fetch)
	if err != nil {
		return err
	}
	refs.Lock()
	defer refs.Unlock()
	refs.fetch = fetch
	for k, v := range vars {
		refs.placeholders[k] = os.Getenv(k)
		os.Setenv(k, v)
	}
	return nil
}

// refs remembers, for each variable Load resolved, the placeholder it
// held, so a secret that rotates can be read again (Secret).
var refs = struct {
	sync.Mutex
	fetch        config.Fetch
	placeholders map[string]string
}{placeholders: map[string]string{}}

// Secret is the value of variable name (value, as its configuration read
// it) kept current: when the variable was a placeholder, it is read again
// from its store once older than secret.MaxAge, or when refused (a PSP
// key rotated while the function stayed warm); otherwise (the local
// stack) it never changes.
func Secret(name, value string) *secret.Value {
	refs.Lock()
	placeholder, ok := refs.placeholders[name]
	fetch := refs.fetch
	refs.Unlock()
	if !ok {
		return secret.Static(value)
	}
	return secret.New(value, func(ctx context.Context) (string, error) {
		vars, err := config.ResolveSecrets(ctx, []string{name + "=" + placeholder}, fetch)
		if err != nil {
			return "", err
		}
		return vars[name], nil
	}, secret.MaxAge, nil)
}
